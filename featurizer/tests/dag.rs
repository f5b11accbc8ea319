//! The DAG of real and random pipelines: regions at the estimates, edges,
//! Jacobians and compiled bounds agree with what lowering computes.

use apps::Size;
use compiler::Target;
use featurizer::{Dag, Rational, Span};
use random_pipelines::{generate, GeneratorParams};

fn target() -> Target {
    Target { vector_bytes: 32, threads: 8 }
}

#[test]
fn blur_regions_grow_by_the_stencil_at_the_estimates() {
    let app = apps::build("blur", Size::Paper, &target()).unwrap();
    let dag = Dag::new(&app.pipeline, &target()).unwrap();
    let (w, h) = (1536, 2560);
    let out = dag.node_by_name("blur_y").unwrap();
    assert!(out.is_output);
    assert_eq!(out.region_required, vec![Span::new(0, w - 1), Span::new(0, h - 1)]);
    let bx = dag.node_by_name("blur_x").unwrap();
    assert_eq!(bx.region_required, vec![Span::new(0, w - 1), Span::new(-1, h)]);
    let input = dag.node_by_name("input").unwrap();
    assert!(input.is_input);
    assert_eq!(input.region_required, vec![Span::new(-1, w), Span::new(-1, h)]);
    // blur_y reads blur_x three times, all with the identity Jacobian.
    let stage = dag.stage(out.stages[0]);
    let edge = dag.edge(stage.incoming[0]);
    assert_eq!(dag.node(edge.producer).name.as_ref(), "blur_x");
    assert_eq!(edge.calls, 3);
    assert_eq!(edge.jacobians.len(), 1);
    assert_eq!(edge.jacobians[0].count, 3);
    assert!(edge.jacobians[0].is_pointwise());
    // The compiled bounds answer for any loop spans.
    assert_eq!(edge.region_read(&[Span::new(8, 15), Span::new(4, 4)]), vec![Span::new(8, 15), Span::new(3, 5)]);
    assert_eq!(out.vector_size, 16);
}

#[test]
fn downsampling_has_rational_jacobians() {
    let app = apps::build("interpolate", Size::Small, &target()).unwrap();
    let dag = Dag::new(&app.pipeline, &target()).unwrap();
    let halves = dag.edges.iter().flat_map(|e| &e.jacobians).flat_map(|j| j.rows.iter().flatten()).flatten();
    assert!(halves.clone().any(|r| *r == Rational::new(2, 1).unwrap()), "a downsample reads at 2x");
    assert!(halves.clone().any(|r| *r == Rational::new(1, 2).unwrap()), "an upsample reads at x/2");
}

#[test]
fn every_app_is_analysed_with_nonempty_regions() {
    for app in apps::all(Size::Paper, &target()) {
        let dag = Dag::new(&app.pipeline, &target()).unwrap_or_else(|e| panic!("{}: {e}", app.name));
        for n in &dag.nodes {
            assert!(n.region_required.iter().all(|s| !s.is_empty()), "{}: {} has an empty region", app.name, n.name);
            assert!(Span::volume(&n.region_computed) >= Span::volume(&n.region_required));
        }
        assert_eq!(dag.stages.len(), app.pipeline.funcs.iter().map(|f| f.stages()).sum::<usize>());
    }
}

#[test]
fn random_pipelines_are_analysed() {
    for seed in 0..40 {
        let p = generate(&GeneratorParams { seed, max_stages: 8, input_size: (64, 48, 3), ..Default::default() }).unwrap();
        let dag = Dag::new(&p.pipeline, &target()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let out = dag.node_by_name(&p.output).unwrap();
        assert_eq!(out.region_required, vec![Span::new(0, 63), Span::new(0, 47), Span::new(0, 2)]);
        for n in &dag.nodes {
            assert!(n.region_required.iter().all(|s| !s.is_empty()), "seed {seed}: {} has an empty region", n.name);
        }
    }
}

/// Every Func at root: the schedule under which the DAG's regions are
/// exactly what lowering's bounds inference computes.
fn all_root(p: &compiler::PipelineDef) -> compiler::Schedule {
    let mut s = compiler::Schedule::new();
    for f in &p.funcs {
        s.func(&f.name).compute_root();
    }
    s
}

#[test]
fn input_regions_are_exactly_what_lowering_reads() {
    use compiler::lang::pipeline::Estimate;
    use compiler::schedule::legality::{check_at_estimates, Limits};
    for app in apps::all(Size::Paper, &target()) {
        let dag = Dag::new(&app.pipeline, &target()).unwrap();
        let mut p = app.pipeline.clone();
        for i in &mut p.inputs {
            let region = &dag.node_by_name(&i.name).unwrap().region_required;
            i.estimates = region.iter().map(|s| Some(Estimate { min: s.min, extent: s.extent() })).collect();
        }
        let s = all_root(&p);
        if let Err(e) = check_at_estimates(&p, &s, &Limits::default()) {
            panic!("{}: the DAG's input regions are too small for lowering: {e}", app.name);
        }
        // One row or column less anywhere, and lowering reads outside it
        // (unless a boundary condition clamps the reads).
        for (k, i) in p.inputs.clone().iter().enumerate() {
            for d in 0..i.dims {
                let mut q = p.clone();
                let e = q.inputs[k].estimates[d].as_mut().unwrap();
                e.min += 1;
                e.extent -= 1;
                let clamped = app.pipeline.funcs.iter().any(|f| f.name.contains("repeat_edge") || f.name.contains("clamp"));
                if !clamped {
                    assert!(
                        check_at_estimates(&q, &s, &Limits::default()).is_err(),
                        "{}: {} dim {d} is larger than lowering reads",
                        app.name,
                        i.name
                    );
                }
            }
        }
    }
}

#[test]
fn pipeline_features_count_operations_and_access_patterns() {
    use featurizer::pipeline_features::{type_bucket, OPS, PATTERNS};
    let app = apps::build("blur", Size::Paper, &target()).unwrap();
    let dag = Dag::new(&app.pipeline, &target()).unwrap();
    let out = dag.node_by_name("blur_y").unwrap();
    let f = featurizer::PipelineFeatures::of(&dag, dag.stage(out.stages[0]));
    let row = |name: &str| OPS.iter().position(|o| *o == name).unwrap();
    let u16 = type_bucket(compiler::Type::u16());
    assert_eq!(f.op_histogram[row("func_call")][u16], 3, "three loads of blur_x");
    assert_eq!(f.op_histogram[row("div")][u16], 1);
    let pointwise = PATTERNS.iter().position(|p| *p == "pointwise").unwrap();
    assert_eq!(f.accesses[pointwise][0][u16], 3, "three pointwise loads of another Func");
    assert_eq!(f.accesses[pointwise][3][u16], 1, "one pointwise store");
    assert_eq!(f.to_vec().len(), featurizer::pipeline_features::PIPELINE_FEATURES);
}

/// `g(x) = clamp(h(x), 0, n)` (a param), `out(x) = lut(g(x))`: the lookup
/// table's region is what g can take, as lowering bounds it.
#[test]
fn an_index_computed_from_a_clamped_func_is_bounded_by_its_values() {
    use compiler::lang::ops::clamp;
    use compiler::{Func, ImageParam, Param, Pipeline, ScalarType, Type, Var};
    let x = Var::new("x");
    let values = ImageParam::new("values", ScalarType::I32, 1);
    values.set_estimate(0, 0, 100);
    let n = Param::new("n", Type::i32());
    n.set_estimate(12.0);
    let (g, lut, out) = (Func::new("g"), Func::new("lut"), Func::new("out"));
    g.define(&[&x], clamp(values.at([x.expr()]) * 3, 2, n.expr()));
    lut.define(&[&x], x.expr() * x.expr());
    out.define(&[&x], lut.at([g.at([x.expr()])]));
    out.set_estimate(0, 0, 100);
    let p = Pipeline::new(&[&out]).unwrap();
    let dag = Dag::new(&p, &target()).unwrap();
    assert_eq!(dag.node_by_name("lut").unwrap().region_required, vec![Span::new(2, 12)]);
}

/// A let's value counts once however often the let is used (the compiled
/// code computes it once), and so does the load inside it; the same holds
/// for a fast-math call, whose expansion binds its intermediate values.
#[test]
fn a_shared_subexpression_counts_once() {
    use compiler::ir::expr::Expr;
    use compiler::lang::fast_math::fast_log;
    use compiler::{Func, ImageParam, Pipeline, ScalarType, Var};
    use featurizer::pipeline_features::{type_bucket, OPS};
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::F32, 1);
    input.set_estimate(0, 0, 100);
    let (squared, logged) = (Func::new("squared"), Func::new("logged"));
    let t = Expr::var("t", compiler::Type::f32());
    let value = input.at([x.expr()]) + 1.0f32;
    squared.define(&[&x], Expr::let_in("t", value, t.clone() * t.clone() + t));
    logged.define(&[&x], fast_log(squared.at([x.expr()])).unwrap());
    logged.set_estimate(0, 0, 100);
    let p = Pipeline::new(&[&logged]).unwrap();
    let dag = Dag::new(&p, &target()).unwrap();
    let ops = |func: &str| {
        let f = featurizer::PipelineFeatures::of(&dag, dag.stage(dag.node_by_name(func).unwrap().stages[0]));
        move |row: &str| f.op_histogram[OPS.iter().position(|o| *o == row).unwrap()][type_bucket(compiler::Type::f32())]
    };
    let squared_ops = ops("squared");
    assert_eq!((squared_ops("image_call"), squared_ops("add"), squared_ops("mul")), (1, 2, 1));
    let logged_ops = ops("logged");
    assert_eq!(logged_ops("func_call"), 1, "fast_log reads its argument once");
    let total: u32 = OPS.iter().map(|o| logged_ops(o)).sum();
    assert!(total < 60, "fast_log's expansion counted {total} f32 operations");
    let edge = dag.edge(dag.stage(dag.node_by_name("squared").unwrap().stages[0]).incoming[0]);
    assert_eq!(edge.jacobians.iter().map(|j| j.count).sum::<u32>(), 1, "one load of the input");
}
