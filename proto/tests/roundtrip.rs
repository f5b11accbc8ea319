//! Round trips through the wire: random pipelines (the `random-pipelines`
//! generator at small sizes) and random legal schedules
//! (`compiler::schedule::random`) go compiler → wire → bytes → wire →
//! compiler and come back equal; their fingerprints are stable.

use compiler::schedule::random::{random_schedule, RandomScheduleOptions};
use compiler::{PipelineDef, Schedule};
use proptest::prelude::*;
use prost::Message;
use proto::v1;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use random_pipelines::{generate, GeneratorParams};

fn pipeline_through_bytes(p: &PipelineDef) -> PipelineDef {
    let bytes = v1::Pipeline::try_from(p).expect("an algorithm has a wire form").encode_to_vec();
    let wire = v1::Pipeline::decode(bytes.as_slice()).expect("the bytes decode");
    PipelineDef::try_from(&wire).unwrap_or_else(|e| panic!("the pipeline comes back: {e}"))
}

fn schedule_through_bytes(s: &Schedule) -> Schedule {
    let bytes = v1::Schedule::from(s).encode_to_vec();
    let wire = v1::Schedule::decode(bytes.as_slice()).expect("the bytes decode");
    Schedule::try_from(&wire).unwrap_or_else(|e| panic!("the schedule comes back: {e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_pipelines_and_schedules_round_trip(seed in 0u64..1_000_000, stages in 2usize..8, side in 16i64..96, schedule_seed in any::<u64>()) {
        let params = GeneratorParams { seed, max_stages: stages, input_size: (side, side, 3), ..Default::default() };
        let generated = generate(&params);
        prop_assume!(generated.is_ok());
        let p = generated.unwrap().pipeline;
        let back = pipeline_through_bytes(&p);
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(proto::fingerprint(&back).unwrap(), proto::fingerprint(&p).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(schedule_seed);
        let s = random_schedule(&p, &mut rng, &RandomScheduleOptions::default());
        prop_assert_eq!(schedule_through_bytes(&s), s);
    }
}

#[test]
fn fingerprints_differ_between_pipelines() {
    let a = generate(&GeneratorParams { seed: 1, max_stages: 4, input_size: (32, 32, 3), ..Default::default() }).unwrap().pipeline;
    let b = generate(&GeneratorParams { seed: 2, max_stages: 4, input_size: (32, 32, 3), ..Default::default() }).unwrap().pipeline;
    assert_ne!(proto::fingerprint(&a).unwrap(), proto::fingerprint(&b).unwrap());
    assert_eq!(proto::fingerprint(&a).unwrap().to_string().len(), 64);
}

/// A pipeline written with the language's handles that uses every node
/// kind the wire carries: params, input buffer fields, lets, selects,
/// logic, casts, reinterpretations, math (every intrinsic the wire names, and the composite ones), bitwise operators and shifts,
/// an inline reduction (a helper Func), Tuple Funcs (an `argmax` and
/// a Tuple update reading both values), an update
/// over a reduction domain with a predicate, a boundary condition.
fn every_node_kind() -> PipelineDef {
    use compiler::lang::boundary::repeat_edge;
    use compiler::lang::ops::{abs, cast, let_in, pow, select, sqrt, CompareExt};
    use compiler::lang::reductions::sum;
    use compiler::{Expr, Func, ImageParam, Param, Pipeline, RDom, ScalarType, Type, Var};
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::U8, 2);
    input.set_estimate(0, 0, 64).set_estimate(1, 0, 48);
    let gain = Param::new("gain", Type::f32());
    let clamped = repeat_edge(&input);
    let f = Func::new("f");
    let v = cast(Type::f32(), clamped.at([x.expr(), y.expr()]));
    f.define(
        &[&x, &y],
        let_in("v", v, |v| {
            select(
                Expr::and(v.gt(Expr::float(0.5, Type::f32())), v.lt(Expr::float(200.0, Type::f32()))),
                sqrt(v.clone()) * gain.expr(),
                pow(v, Expr::float(2.0, Type::f32())),
            )
        }),
    );
    let r = RDom::new("r", &[(Expr::i32(-1), Expr::i32(3))]);
    let blur = Func::new("blur");
    blur.define(&[&x, &y], sum(f.at([x.expr() + r.x().expr(), y.expr()])));
    let tri = RDom::with_where("t", &[(Expr::i32(0), input.extent(0) - 1), (Expr::i32(0), Expr::i32(4))], |t| {
        Expr::or(t.x().lt(t.y()), Expr::not(t.y().eq_(3)))
    });
    let bits = Func::new("bits");
    let px = clamped.at([x.expr(), y.expr()]);
    bits.define(&[&x, &y], ((px.clone() & 0x0F) | (px.clone() >> 4)) ^ (px << y.expr()) ^ !clamped.at([y.expr(), x.expr()]));
    let intrinsics = Func::new("intrinsics");
    {
        use compiler::lang::intrinsics::{absd, lerp, mux, saturating_cast};
        use compiler::lang::ops::{
            ceil, count_leading_zeros, count_trailing_zeros, exp, floor, is_finite, is_inf, is_nan, log, popcount, reinterpret, round,
            trunc,
        };
        let px = clamped.at([x.expr(), y.expr()]);
        let fx = cast(Type::f32(), px.clone());
        let counts = popcount(px.clone()) + count_leading_zeros(px.clone()) + count_trailing_zeros(px.clone());
        let counts = counts ^ cast(Type::u8(), reinterpret(Type::u32(), cast(Type::f32(), px.clone())) >> 23);
        let classes = Expr::or(Expr::and(is_nan(fx.clone()), is_inf(fx.clone())), is_finite(fx.clone()));
        let rounded = trunc(fx.clone()) + floor(fx.clone()) + ceil(fx.clone()) + round(exp(fx.clone())) + log(fx.clone());
        let mixed = lerp(px.clone(), absd(px.clone(), counts), px.clone()).unwrap() + saturating_cast(Type::u8(), rounded);
        let chosen = mux(y.expr(), &[mixed.clone(), px.clone(), mixed]).unwrap();
        intrinsics.define(&[&x, &y], select(classes, chosen, px));
    }
    let am = compiler::lang::reductions::argmax(f.at([x.expr() + r.x().expr(), y.expr()]));
    let pair = Func::new("pair");
    pair.define_tuple(&[&x, &y], [am[0].clone(), cast(Type::i32(), am[1].clone())]);
    let [p0, p1] = [0, 1].map(|k| pair.value_at([x.expr(), y.expr()], k));
    pair.update_tuple([x.expr(), y.expr()], [p1.clone(), p0 + p1]);
    let acc = Func::new("acc");
    let paired = cast(Type::f32(), pair.value_at([x.expr(), y.expr()], 1));
    acc.define(&[&x, &y], abs(blur.at([x.expr(), y.expr()])) + cast(Type::f32(), intrinsics.at([x.expr(), y.expr()])) + paired);
    acc.update(
        [x.expr(), y.expr()],
        acc.at([x.expr(), y.expr()]) + cast(Type::f32(), tri.x().expr() + input.min(1)) + cast(Type::f32(), bits.at([x.expr(), y.expr()])),
    );
    acc.set_estimate(0, 0, 64).set_estimate(1, 0, 48);
    Pipeline::new(&[&acc]).expect("the pipeline checks")
}

#[test]
fn every_node_kind_round_trips() {
    let p = every_node_kind();
    assert_eq!(pipeline_through_bytes(&p), p);
}

/// A pipeline whose output sums `terms` calls of its input, left to right
/// (an expression `terms` deep).
fn deep_sum(terms: usize) -> PipelineDef {
    use compiler::{Func, ImageParam, Pipeline, ScalarType, Var};
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::I32, 1);
    let mut e = input.at([x.expr()]);
    for k in 1..terms {
        e = e + input.at([x.expr() + k as i32]);
    }
    let out = Func::new("out");
    out.define(&[&x], e);
    Pipeline::new(&[&out]).unwrap()
}

#[test]
fn expressions_as_deep_as_the_wire_decodes_round_trip_and_deeper_ones_are_refused() {
    // `a + b` nests the left operand one level deeper, and each call's
    // coordinate one more: `terms - 1` additions then a call then `x + k`.
    let deepest = deep_sum(proto::MAX_EXPR_DEPTH - 2);
    let request = v1::ScheduleRequest { pipeline: Some(v1::Pipeline::try_from(&deepest).unwrap()), ..Default::default() };
    let decoded = v1::ScheduleRequest::decode(request.encode_to_vec().as_slice()).expect("prost decodes it");
    assert_eq!(PipelineDef::try_from(decoded.pipeline.as_ref().unwrap()).unwrap(), deepest);
    let e = v1::Pipeline::try_from(&deep_sum(proto::MAX_EXPR_DEPTH)).unwrap_err();
    assert!(e.to_string().contains("Func out: an expression is nested more than 45 deep"), "{e}");
}

/// A reply's reason goes through bytes with each rejection, its Func and
/// counts; a reply from a server that predates the field decodes without
/// one, its words in `fallback` untouched.
#[test]
fn a_replys_reason_round_trips_and_older_replies_have_none() {
    let rejection = |cause: v1::RejectionCause, func: &str, timed_out: u32| v1::Rejection {
        cause: cause.into(),
        func: func.to_string(),
        timed_out,
        text: format!("{} {func}", cause.as_str_name()),
    };
    let mut reason = v1::Reason {
        nested: Some(rejection(v1::RejectionCause::TimedOut, "", 3)),
        flat: Some(rejection(v1::RejectionCause::FailedAtEstimates, "sums", 0)),
        last_resort_mispriced: Some(rejection(v1::RejectionCause::Mispriced, "f", 0)),
        timed_out: 2,
        ..Default::default()
    };
    reason.set_kind(v1::ReasonKind::LastResort);
    reason.set_last_resort(v1::LastResortPick::Mispriced);
    let reply = v1::ScheduleReply {
        schedule_text: "out.compute_root()\n".to_string(),
        fallback: "no candidate with nested Funcs ran at the estimates as priced".to_string(),
        reason: Some(reason),
        ..Default::default()
    };
    let back = v1::ScheduleReply::decode(reply.encode_to_vec().as_slice()).expect("the bytes decode");
    assert_eq!(back, reply);
    let reason = back.reason.as_ref().unwrap();
    assert_eq!((reason.kind(), reason.last_resort()), (v1::ReasonKind::LastResort, v1::LastResortPick::Mispriced));
    assert_eq!(reason.flat.as_ref().map(|r| (r.cause(), r.func.as_str())), Some((v1::RejectionCause::FailedAtEstimates, "sums")));

    // Field 13 is the reason: a reply without it is what an older server
    // sends, and decodes with none.
    let older = v1::ScheduleReply { reason: None, ..reply.clone() };
    let bytes = older.encode_to_vec();
    let decoded = v1::ScheduleReply::decode(bytes.as_slice()).expect("the bytes decode");
    assert_eq!((decoded.reason, decoded.fallback.as_str()), (None, reply.fallback.as_str()));
    assert!(reply.encode_to_vec().len() > bytes.len());
}
