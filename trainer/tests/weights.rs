//! Weights files: exact round trips, refused layouts and shapes, and
//! corrupt files that give errors, never panics.

mod common;

use common::synthetic_samples;
use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use trainer::weights::Parameter;
use trainer::{predict, CostNetwork, LearnedModel, NetworkShape, WeightsError, WeightsFile};

#[test]
fn weights_round_trip_bit_exactly_through_bytes_and_files() {
    let network = CostNetwork::random(1, 11);
    let file = WeightsFile::of(&network, "round-7");
    let bytes = file.encode();
    let decoded = WeightsFile::decode(&bytes).expect("decodes");
    assert_eq!(decoded, file);
    let loaded = decoded.to_network().expect("fits this build");
    assert_eq!(loaded.values(), network.values());

    let samples = synthetic_samples(1, 5, 6);
    let a = predict(&network, &samples).expect("predictions");
    let b = predict(&loaded, &samples).expect("predictions");
    assert_eq!(a.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.iter().map(|v| v.to_bits()).collect::<Vec<_>>());

    let path = std::env::temp_dir().join(format!("trainer-weights-{}.hrcm", std::process::id()));
    file.write(&path).expect("writes");
    let model = LearnedModel::load(&path).expect("loads");
    std::fs::remove_file(&path).ok();
    assert_eq!(model.version(), "round-7");
    assert!(search::CostModel::name(&model).contains("round-7"));
}

#[test]
fn weights_of_another_feature_layout_are_refused_naming_it() {
    let mut file = WeightsFile::of(&CostNetwork::random(1, 0), "old");
    file.header.schedule_layout.version = 99;
    file.header.schedule_layout.names_hash = 0x1234;
    let e = WeightsFile::decode(&file.encode()).expect("decodes").to_network().err().expect("refused");
    assert!(matches!(e, WeightsError::Layout(_)), "{e:?}");
    let message = e.to_string();
    let ours = SCHEDULE_LAYOUT.id();
    for needle in [
        "schedule feature layout",
        &format!("expected version {}", ours.version),
        "got version 99",
        &format!("{:016x}", ours.names_hash),
        "0000000000001234",
    ] {
        assert!(message.contains(needle), "{message:?} lacks {needle:?}");
    }

    let mut file = WeightsFile::of(&CostNetwork::random(1, 0), "old");
    file.header.pipeline_layout.len += 7;
    let e = LearnedModel::from_bytes(&file.encode()).err().expect("refused");
    assert!(e.to_string().contains("pipeline feature layout"), "{e}");
    assert!(e.to_string().contains(&format!("{} fields", PIPELINE_LAYOUT.id().len + 7)), "{e}");
}

#[test]
fn weights_of_an_earlier_version_of_the_same_features_can_adopt_this_builds_layouts() {
    let network = CostNetwork::random(1, 3);
    let mut file = WeightsFile::of(&network, "earlier");
    file.header.pipeline_layout.version -= 1;
    file.header.schedule_layout.version -= 1;
    assert!(matches!(file.to_network(), Err(WeightsError::Layout(_))));
    let adopted = file.clone().adopting_current_layouts().expect("only the versions differ");
    assert_eq!(adopted.to_network().expect("fits this build").values(), network.values());

    // Other features (another names hash or length) are never adopted.
    let mut other = file.clone();
    other.header.schedule_layout.names_hash ^= 1;
    assert!(matches!(other.adopting_current_layouts(), Err(WeightsError::Layout(_))));
    let mut longer = file;
    longer.header.pipeline_layout.len += 1;
    assert!(matches!(longer.adopting_current_layouts(), Err(WeightsError::Layout(_))));
}

#[test]
fn weights_of_another_network_shape_or_parameters_are_refused() {
    let mut file = WeightsFile::of(&CostNetwork::random(1, 0), "wide");
    file.header.shape = NetworkShape { head2_channels: 48, ..NetworkShape::CURRENT };
    let e = file.to_network().err().expect("refused");
    assert!(matches!(e, WeightsError::Shape { .. }), "{e:?}");
    assert!(e.to_string().contains("head2 48"), "{e}");

    let mut file = WeightsFile::of(&CostNetwork::random(1, 0), "odd");
    file.parameters[2] = Parameter { name: "head2_filter".into(), extents: vec![39, 24], values: vec![0.0; 936] };
    let e = file.to_network().err().expect("refused");
    assert!(e.to_string().contains("head2_filter: extents [39, 24]"), "{e}");

    let mut file = WeightsFile::of(&CostNetwork::random(1, 0), "nan");
    file.parameters[5].values[0] = f32::NAN;
    assert!(file.to_network().is_err());
}

#[test]
fn corrupt_files_give_errors_not_panics() {
    let bytes = WeightsFile::of(&CostNetwork::random(1, 4), "v").encode();
    assert!(matches!(WeightsFile::decode(b"not weights at all"), Err(WeightsError::NotWeights)));
    assert!(matches!(WeightsFile::decode(&[]), Err(WeightsError::NotWeights)));
    // Every truncation.
    for len in 0..bytes.len() {
        assert!(LearnedModel::from_bytes(&bytes[..len]).is_err(), "truncated to {len} bytes");
    }
    // A flipped bit anywhere.
    for at in (0..bytes.len()).step_by(7) {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        assert!(LearnedModel::from_bytes(&bad).is_err(), "bit flipped at byte {at}");
    }
    // Absurd lengths behind a valid checksum.
    let mut file = WeightsFile::decode(&bytes).expect("decodes");
    file.parameters[0].extents = vec![u32::MAX, u32::MAX, u32::MAX];
    let mut forged = file.encode();
    let body = forged.len() - 8;
    forged.truncate(body);
    forged.truncate(forged.len() - 4 * 4264);
    forged.extend_from_slice(&fnv1a(&forged).to_le_bytes());
    let e = WeightsFile::decode(&forged).expect_err("refused");
    assert!(matches!(e, WeightsError::Corrupt(_)), "{e:?}");
    let missing = LearnedModel::load(std::path::Path::new("/nonexistent/weights.hrcm")).err().expect("refused");
    assert!(missing.to_string().contains("/nonexistent/weights.hrcm"), "{missing}");
}

/// FNV-1a, 64 bits: the files' checksum.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

#[test]
fn an_ensemble_round_trips_with_its_member_count() {
    let network = CostNetwork::random(4, 12);
    let file = WeightsFile::of(&network, "four");
    assert_eq!(file.header.shape.members, 4);
    assert_eq!(file.parameters[0].extents[0], 4);
    let loaded = WeightsFile::decode(&file.encode()).expect("decodes").to_network().expect("fits");
    assert_eq!(loaded.members(), 4);
    assert_eq!(loaded.values(), network.values());

    let mut none = WeightsFile::of(&CostNetwork::random(1, 0), "none");
    none.header.shape.members = 0;
    let e = none.to_network().err().expect("refused");
    assert!(e.to_string().contains("0 members"), "{e}");
}

/// `file` in format 1 (before ensembles: five shape sizes, parameters
/// without a member dimension), 2 (before the terms were versioned: no
/// terms version) or 3 (before the host: no host); `file` is one member
/// of terms version 1.
fn in_old_format(file: &WeightsFile, format: u32) -> Vec<u8> {
    let u32s = |out: &mut Vec<u8>, values: &[u32]| values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    let string = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    let mut bytes = b"HRCM".to_vec();
    u32s(&mut bytes, &[format]);
    string(&mut bytes, &file.header.version);
    for layout in [&file.header.pipeline_layout, &file.header.schedule_layout] {
        string(&mut bytes, &layout.kind);
        u32s(&mut bytes, &[layout.version]);
        bytes.extend_from_slice(&layout.names_hash.to_le_bytes());
        u32s(&mut bytes, &[layout.len]);
    }
    let single = format == 1;
    u32s(&mut bytes, &file.header.shape.to_array()[..if single { 5 } else { 6 }]);
    if format == 3 {
        u32s(&mut bytes, &[file.header.terms_version]);
    }
    u32s(&mut bytes, &[file.parameters.len() as u32]);
    for p in &file.parameters {
        let extents = if single { &p.extents[1..] } else { &p.extents[..] };
        string(&mut bytes, &p.name);
        u32s(&mut bytes, &[extents.len() as u32]);
        u32s(&mut bytes, extents);
        p.values.iter().for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
    }
    bytes.extend_from_slice(&fnv1a(&bytes).to_le_bytes());
    bytes
}

/// Files of the older formats still load: format 1 as one member,
/// formats 1 and 2 as weights of the terms of version 1 (they were trained
/// before the dependent steps existed, and price as they did), and all
/// three without the host they learned.
#[test]
fn files_of_formats_1_to_3_still_load_with_the_terms_they_weight_and_no_host() {
    let network = CostNetwork::random(1, 13).with_terms_version(1);
    let file = WeightsFile::of(&network, "old format");
    assert_eq!(file.header.terms_version, 1);
    for format in [1, 2, 3] {
        let decoded = WeightsFile::decode(&in_old_format(&file, format)).unwrap_or_else(|e| panic!("format {format}: {e}"));
        assert_eq!(decoded, file, "format {format}");
        let loaded = decoded.to_network().expect("fits");
        assert_eq!((loaded.values(), loaded.terms_version()), (network.values(), 1), "format {format}");
    }
    let samples = synthetic_samples(2, 5, 6);
    let loaded = WeightsFile::decode(&in_old_format(&file, 2)).expect("decodes").to_network().expect("fits");
    assert_eq!(predict(&loaded, &samples).expect("predictions"), predict(&network, &samples).expect("predictions"));

    let mut future = WeightsFile::of(&CostNetwork::random(1, 0), "future");
    future.header.terms_version = 99;
    let e = WeightsFile::decode(&future.encode()).expect("decodes").to_network().err().expect("refused");
    assert!(matches!(e, WeightsError::Terms { found: 99 }), "{e:?}");
    assert!(e.to_string().contains("cost terms of version 99"), "{e}");
}

/// A file records the host its weights learned, and one whose host does
/// not pass the fingerprint's checks is refused as corrupt.
#[test]
fn the_host_the_weights_learned_round_trips_and_is_checked() {
    let host = data::HostFingerprint::from_sources(
        "processor : 0\nmodel name : Test CPU\nflags : sse sse2 avx avx2 fma\n",
        vec![data::CacheInfo { level: 1, kind: "Data".into(), size_bytes: 32768 }],
    );
    let file = WeightsFile::of(&CostNetwork::random(1, 3), "on a host").learned_on(Some(host.clone()));
    let decoded = WeightsFile::decode(&file.encode()).expect("decodes");
    assert_eq!(decoded.header.host.as_ref(), Some(&host));
    assert_eq!(decoded, file);
    assert_eq!(WeightsFile::decode(&WeightsFile::of(&CostNetwork::random(1, 3), "nowhere").encode()).expect("decodes").header.host, None);

    let bad = data::HostFingerprint { isa_features: vec!["avx2".into(), "avx".into()], ..host };
    let e = WeightsFile::decode(&file.learned_on(Some(bad)).encode()).expect_err("refused");
    assert!(matches!(e, WeightsError::Corrupt(_)) && e.to_string().contains("the host"), "{e}");
}

/// Every set of weights shipped beside the training stores they were
/// trained on (`data/assets/`), one per host, fits this build's feature
/// layouts and network: a change of either must retrain them (the commands
/// are in `trainer/assets/README.md`).
#[test]
fn the_shipped_weights_fit_this_build() {
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut shipped: Vec<_> = std::fs::read_dir(&assets)
        .expect("the assets folder")
        .map(|entry| entry.expect("an assets entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "weights"))
        .collect();
    shipped.sort();
    let names: Vec<_> = shipped.iter().filter_map(|p| p.file_name()?.to_str()).collect();
    assert_eq!(names, ["epyc-7cd6cd16125da94a.weights", "epyc-avx2-818e11c7e41ce63d.weights", "xeon-e1a600468163db2c.weights"]);
    for path in &shipped {
        let file = WeightsFile::read(path).unwrap_or_else(|e| panic!("{} does not decode: {e}", path.display()));
        file.to_network().unwrap_or_else(|e| panic!("{} does not fit this build: {e}", path.display()));
        LearnedModel::load(path).unwrap_or_else(|e| panic!("{} does not load as a cost model: {e}", path.display()));
    }
}
