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
