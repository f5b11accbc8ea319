//! Pipeline definitions as JSON (training stores keep them): a Tuple
//! pipeline round-trips, and JSON written before Tuples (one `ty` and one
//! `value` per Func, one `value` per update) still reads as the same
//! pipeline; a Func with neither form is an error naming it.

use compiler::lang::ops::cast;
use compiler::*;
use serde_json::Value;

fn pipeline() -> PipelineDef {
    let x = Var::new("x");
    let input = ImageParam::new("input", ScalarType::U8, 1);
    let r = RDom::new("r", &[(Expr::i32(0), Expr::i32(3))]);
    let g = Func::new("g");
    g.define(&[&x], cast(Type::i32(), input.at([x.expr()])));
    g.update([x.expr()], g.at([x.expr()]) + cast(Type::i32(), input.at([&x + r.x().expr()])));
    let t = Func::new("t");
    t.define_tuple(&[&x], [g.at([x.expr()]), Expr::i32(1)]);
    let [a, b] = [0, 1].map(|k| t.value_at([x.expr()], k));
    t.update_tuple([x.expr()], [b.clone(), a + b]);
    let out = Func::new("out");
    out.define(&[&x], t.value_at([x.expr()], 1));
    Pipeline::new(&[&out]).unwrap()
}

/// `json` with every single-valued definition in the pre-Tuple form.
fn before_tuples(mut json: Value) -> Value {
    for f in json["funcs"].as_array_mut().unwrap() {
        let f = f.as_object_mut().unwrap();
        if f["types"].as_array().unwrap().len() == 1 {
            let ty = f.remove("types").unwrap()[0].clone();
            let value = f.remove("values").unwrap()[0].clone();
            f.insert("ty".into(), ty);
            f.insert("value".into(), value);
            for u in f["updates"].as_array_mut().unwrap() {
                let u = u.as_object_mut().unwrap();
                let value = u.remove("values").unwrap()[0].clone();
                u.insert("value".into(), value);
            }
        }
    }
    json
}

#[test]
fn definitions_round_trip_and_read_the_form_before_tuples() {
    let p = pipeline();
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(serde_json::from_value::<PipelineDef>(json.clone()).unwrap(), p);
    let old = before_tuples(json);
    assert!(old["funcs"][0].get("ty").is_some(), "the test rewrites g: {old}");
    assert_eq!(serde_json::from_value::<PipelineDef>(old.clone()).unwrap(), p);

    let mut broken = old;
    broken["funcs"][0].as_object_mut().unwrap().remove("value");
    let err = serde_json::from_value::<PipelineDef>(broken).unwrap_err().to_string();
    assert!(err.contains("Func g: no values"), "{err}");
}
