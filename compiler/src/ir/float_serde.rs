//! Float constants through serde. JSON has no infinity or NaN (serde_json
//! writes them as `null`, which then does not read back), so in
//! human-readable formats a non-finite value is the string `"inf"`,
//! `"-inf"` or `"nan"`, and a finite one a number; binary formats (the
//! runner's frames) carry the f64 as it is. Reading accepts both forms, so
//! every pipeline written reads back equal.

use serde::{Deserialize, Deserializer, Serializer};

/// Writes `v`: a number, or in a human-readable format a name if it is not finite.
pub fn serialize<S: Serializer>(v: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() || !serializer.is_human_readable() {
        serializer.serialize_f64(*v)
    } else if v.is_nan() {
        serializer.serialize_str("nan")
    } else if *v > 0.0 {
        serializer.serialize_str("inf")
    } else {
        serializer.serialize_str("-inf")
    }
}

/// A float as written by [`serialize`] (in a human-readable format, a
/// number or one of the names).
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    if !deserializer.is_human_readable() {
        return f64::deserialize(deserializer);
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Number(f64),
        Name(String),
    }
    match Written::deserialize(deserializer)? {
        Written::Number(v) => Ok(v),
        Written::Name(name) => match name.as_str() {
            "inf" => Ok(f64::INFINITY),
            "-inf" => Ok(f64::NEG_INFINITY),
            "nan" => Ok(f64::NAN),
            other => Err(serde::de::Error::custom(format!("`{other}` is not a float (a number, \"inf\", \"-inf\" or \"nan\")"))),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::expr::Expr;
    use crate::ir::types::{ScalarType, Type};

    #[test]
    fn non_finite_constants_read_back_from_json() {
        for v in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1.5, -0.0, f64::MAX] {
            let e = Expr::float(v, Type::scalar(ScalarType::F32));
            let json = serde_json::to_string(&e).unwrap();
            let back: Expr = serde_json::from_str(&json).unwrap_or_else(|err| panic!("{json}: {err}"));
            assert_eq!(back.as_float().map(f64::to_bits), e.as_float().map(f64::to_bits), "{json}");
        }
        let wrong = serde_json::to_string(&Expr::float(2.0, Type::scalar(ScalarType::F64))).unwrap().replace("2.0", "\"infinity\"");
        let err = serde_json::from_str::<Expr>(&wrong).unwrap_err().to_string();
        assert!(err.contains("`infinity` is not a float"), "{err}");
    }
}
