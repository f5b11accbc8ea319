//! Schedule features against what the compiled code does.

use compiler::{Func, ImageParam, Pipeline, ScalarType, Target, Var};
use search::cost_model::{Analytical, Machine};
use search::featurize::featurize;

/// A pure definition shifts its last vector inwards, so all of it runs in
/// vectors; an update's last partial vector is guarded and runs as scalar
/// code (the vectorizer falls back to the scalar loop when not every lane
/// is in range), and its features say so.
#[test]
fn an_updates_partial_last_vector_counts_as_scalar_code() {
    let target = Target { vector_bytes: 32, threads: 1 };
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new("input", ScalarType::F32, 2);
    input.set_estimate(0, 0, 100).set_estimate(1, 0, 10);
    let f = Func::new("f");
    f.define(&[&x, &y], input.at([x.expr(), y.expr()]) * 2.0f32);
    f.update([x.expr(), y.expr()], f.at([x.expr(), y.expr()]) + 1.0f32);
    f.set_estimate(0, 0, 100).set_estimate(1, 0, 10);
    let p = Pipeline::new(&[&f]).unwrap();
    let dag = featurizer::Dag::new(&p, &target).unwrap();
    let model = Analytical::new(Machine::typical(1));
    let root = search::beam::all_at_root(&dag, &model).root;
    let features = featurize(&dag, &root);
    let stages = &dag.node_by_name("f").unwrap().stages;
    let pure = features.get(&stages[0]).unwrap();
    let update = features.get(&stages[1]).unwrap();
    assert_eq!(pure.vector_size, 8.0);
    assert_eq!((pure.num_vectors * pure.vector_size, pure.num_scalars), (1000.0, 0.0));
    assert_eq!(update.vector_size, 8.0);
    assert_eq!((update.num_vectors, update.num_scalars), (120.0, 40.0), "12 vectors and 4 scalars per row of 100");
}

/// A vector read counts as the loads the code generator makes of it: dense
/// loads (one per unit of stride) up to a stride of 8, one for an
/// upsampling by up to 8 and for a read through a clamp to fixed edges, a
/// scalar load per lane (a gather) beyond those and for a data-dependent
/// index; a read that does not move along the vector is one scalar load.
#[test]
fn vector_reads_count_as_the_loads_the_code_generator_makes() {
    use compiler::lang::ops::clamp;
    use compiler::Expr;
    let target = Target { vector_bytes: 32, threads: 1 };
    let loads = |index: &dyn Fn(&Var) -> Expr| {
        let (x, y) = (Var::new("x"), Var::new("y"));
        let input = ImageParam::new("input", ScalarType::F32, 2);
        input.set_estimate(0, 0, 640).set_estimate(1, 0, 8);
        let f = Func::new("f");
        f.define(&[&x, &y], input.at([index(&x), y.expr()]) * 2.0f32);
        f.set_estimate(0, 0, 64).set_estimate(1, 0, 8);
        let p = Pipeline::new(&[&f]).unwrap();
        let dag = featurizer::Dag::new(&p, &target).unwrap();
        let root = search::beam::all_at_root(&dag, &Analytical::new(Machine::typical(1))).root;
        let features = featurize(&dag, &root);
        let f = features.get(&dag.node_by_name("f").unwrap().stages[0]).unwrap();
        assert_eq!(f.vector_size, 8.0);
        (f.vector_loads_per_vector, f.scalar_loads_per_vector)
    };
    assert_eq!(loads(&|x| x.expr()), (1.0, 0.0));
    assert_eq!(loads(&|x| x * 8 + 3), (8.0, 0.0));
    assert_eq!(loads(&|x| x * 9), (0.0, 8.0));
    assert_eq!(loads(&|x| x / 2 + 1), (1.0, 0.0));
    assert_eq!(loads(&|x| x / 8), (1.0, 0.0));
    assert_eq!(loads(&|x| x / 9), (0.0, 8.0));
    assert_eq!(loads(&|x| clamp(x - 1, 0, 63)), (1.0, 0.0));
    assert_eq!(loads(&|x| clamp(x * 2, 0, 63)), (2.0, 0.0));
    assert_eq!(loads(&|x| x * x), (0.0, 8.0));
    assert_eq!(loads(&|_| Expr::i32(5)), (0.0, 1.0));
}
