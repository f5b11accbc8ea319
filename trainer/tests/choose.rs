//! Which model a search uses: explicit weights, else the store's promoted
//! weights for the host, else the nearest known host's, else the analytical
//! model; and it says which.

use data::{NewWeights, Store};
use featurizer::{PIPELINE_LAYOUT, SCHEDULE_LAYOUT};
use trainer::{choose_model, store_layout, ChooseError, CostNetwork, WeightsFile, Zoo};

fn weights_blob() -> Vec<u8> {
    WeightsFile::of(&CostNetwork::random(1, 3), "test").encode()
}

#[test]
fn the_promoted_weights_of_the_host_are_used_else_the_analytical_model() {
    tch::set_num_threads(1);
    let mut store = Store::open_in_memory().unwrap();
    let chosen = choose_model(None, Some(&store), "host-a", None, 2).unwrap();
    assert_eq!(chosen.why, "analytical (no promoted weights for host host-a)");
    assert_eq!(chosen.model.name(), "analytical");

    let version = promote_for(&mut store, "host-a");
    let chosen = choose_model(None, Some(&store), "host-a", None, 2).unwrap();
    assert_eq!(chosen.why, format!("learned weights v{version}, promoted for host host-a"));
    assert!(chosen.model.name().starts_with("learned"), "{}", chosen.model.name());
    let other = choose_model(None, Some(&store), "host-b", None, 2).unwrap();
    assert!(other.why.starts_with("analytical"), "weights are per host: {}", other.why);
}

#[test]
fn unusable_weights_are_an_error_not_a_silent_fallback() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.weights");
    std::fs::write(&path, b"not weights").unwrap();
    match choose_model(Some(&path), None, "host-a", None, 2) {
        Err(ChooseError::File { path: p, .. }) => assert!(p.ends_with("broken.weights")),
        other => panic!("expected a file error, got {:?}", other.map(|c| c.why)),
    }
}

fn fingerprint(flags: &str, l2_kib: u64) -> data::HostFingerprint {
    data::HostFingerprint::from_sources(
        &format!("processor : 0\nmodel name : Test CPU\nflags : {flags}\n"),
        vec![data::CacheInfo { level: 2, kind: "Unified".into(), size_bytes: l2_kib * 1024 }],
    )
}

fn promote_for(store: &mut Store, host_key: &str) -> u32 {
    let version = store
        .insert_weights(&NewWeights {
            parent: None,
            blob: weights_blob(),
            pipeline_layout: store_layout(&PIPELINE_LAYOUT),
            schedule_layout: store_layout(&SCHEDULE_LAYOUT),
            training_set: "test".into(),
            metrics: serde_json::json!({}),
            host_key: Some(host_key.into()),
        })
        .unwrap();
    store.promote(version).unwrap();
    version
}

/// A host the store knows but has no weights for is ranked with the
/// promoted weights of the nearest other host (by vector width first), and
/// the answer says whose and how near; without a zoo, with the analytical
/// model as before.
#[test]
fn a_host_without_weights_is_ranked_with_the_nearest_hosts_and_says_so() {
    tch::set_num_threads(1);
    let mut store = Store::open_in_memory().unwrap();
    let wide = fingerprint("sse sse2 avx avx2 fma avx512f avx512bw", 1024);
    let narrow = fingerprint("sse sse2 avx avx2 fma", 512);
    let new = fingerprint("sse sse2 avx avx2 fma bmi2", 1024);
    for h in [&wide, &narrow, &new] {
        store.upsert_host(h).unwrap();
    }
    promote_for(&mut store, &wide.key());
    let narrow_version = promote_for(&mut store, &narrow.key());

    let chosen = choose_model(None, Some(&store), &new.key(), Some(&Zoo::empty()), 2).unwrap();
    let expected = format!(
        "learned weights of the store's v{narrow_version}, learned on host {}, the nearest known host (x86 both, f32 lanes 8 against 8, \
         ISA features 0.17 apart, data caches 1.00 apart, cores 1 against 1) (no promoted weights for host {})",
        narrow.key(),
        new.key()
    );
    assert_eq!(chosen.why, expected);
    assert!(chosen.model.name().starts_with("learned"), "{}", chosen.model.name());

    let without = choose_model(None, Some(&store), &new.key(), None, 2).unwrap();
    assert_eq!(without.why, format!("analytical (no promoted weights for host {})", new.key()));
    let unknown = choose_model(None, Some(&store), "host-nobody-met", Some(&Zoo::empty()), 2).unwrap();
    assert!(unknown.why.starts_with("analytical") && unknown.why.contains("fingerprint is unknown"), "{}", unknown.why);
}

/// The shipped weights each record the host they learned, and a new
/// AVX-512 AMD host (a Zen 5 EPYC's features) takes the Zen 4 EPYC's:
/// the same vector width and nearly the same features.
#[test]
fn the_shipped_weights_stand_in_for_the_hosts_near_them() {
    tch::set_num_threads(1);
    let shipped = Zoo::shipped();
    let keys: Vec<String> = shipped.entries().iter().map(|e| e.host.key()).collect();
    assert_eq!(keys, ["7cd6cd16125da94a", "818e11c7e41ce63d", "e1a600468163db2c"]);
    for e in shipped.entries() {
        assert!(e.origin.contains(&e.host.key()), "{} records host {}", e.origin, e.host.key());
        e.file.fits().unwrap_or_else(|err| panic!("{}: {err}", e.origin));
    }
    let zen5 = fingerprint(
        "abm aes avx avx2 avx512_bf16 avx512_bitalg avx512_vbmi2 avx512_vnni avx512_vp2intersect avx512_vpopcntdq avx512bw \
         avx512cd avx512dq avx512f avx512ifma avx512vbmi avx512vl avx_vnni bmi1 bmi2 f16c fma gfni movbe pclmulqdq popcnt \
         sha_ni sse sse2 sse4_1 sse4_2 sse4a ssse3 vaes vpclmulqdq",
        1024,
    );
    let (nearest, distance) = shipped.nearest(&zen5, |_| true).expect("a comparable host");
    assert_eq!(nearest.host.key(), "7cd6cd16125da94a", "{distance}");
    let mut store = Store::open_in_memory().unwrap();
    store.upsert_host(&zen5).unwrap();
    let chosen = choose_model(None, Some(&store), &zen5.key(), Some(shipped), 2).unwrap();
    assert!(chosen.why.contains("shipped epyc-7cd6cd16125da94a.weights"), "{}", chosen.why);
}
