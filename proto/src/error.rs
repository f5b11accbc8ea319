//! Why a wire message is not a valid compiler value, and why a compiler
//! value has no wire form. Every message names where the problem is: the
//! Func (and its definition or stage) or the input, param or field.

use thiserror::Error;

/// A wire message that is not a valid pipeline, schedule or target.
#[derive(Debug, Error)]
pub enum FromWireError {
    #[error("{at}: missing {field}")]
    Missing { at: String, field: &'static str },
    #[error("{at}: {field} has unknown value {value}")]
    UnknownEnum { at: String, field: &'static str, value: i32 },
    #[error("{at}: calls unknown Func {callee}")]
    UnknownFunc { at: String, callee: String },
    #[error("{at}: calls Func {callee}, which is listed after it (Funcs are listed producers first)")]
    CallsLater { at: String, callee: String },
    #[error("{at}: calls {callee} with {got} coordinates, but it has {expected} dimensions")]
    Arity { at: String, callee: String, expected: usize, got: usize },
    #[error("Func {name} is defined twice")]
    DuplicateFunc { name: String },
    #[error("{at}: {why}")]
    Invalid { at: String, why: String },
    #[error("{at}: {what} {text} is longer than the {max} bytes it may have")]
    TooLong { at: String, what: String, text: String, max: usize },
    #[error("the pipeline has more {what} than the {max} a request may have")]
    TooLarge { what: &'static str, max: usize },
    #[error("the pipeline fails the compiler's checks: {0}")]
    Lang(#[from] compiler::LangError),
}

impl FromWireError {
    /// The value at `at` is invalid, for reason `why`.
    pub fn invalid(at: &str, why: impl Into<String>) -> FromWireError {
        FromWireError::Invalid { at: at.to_string(), why: why.into() }
    }

    /// The message at `at` lacks its required `field`.
    pub fn missing(at: &str, field: &'static str) -> FromWireError {
        FromWireError::Missing { at: at.to_string(), field }
    }
}

/// A compiler value with no wire form: the wire carries algorithms, whose
/// expressions are scalar and free of the nodes only lowering makes.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ToWireError {
    #[error("{at}: {what} has no wire form (algorithms are scalar and hold no lowered nodes)")]
    NotAnAlgorithm { at: String, what: String },
    #[error(
        "{at}: an expression is nested more than {max} deep, more than the wire decodes (bind parts with lets or compute them in Funcs)"
    )]
    TooDeep { at: String, max: usize },
}
