//! Why a wire message is not a valid compiler value, and why a compiler
//! value has no wire form. Every message names where the problem is: the
//! Func (and its definition or stage) or the input, param or field.

use thiserror::Error;

/// A wire message that is not a valid pipeline, schedule or target.
#[derive(Debug, Error)]
pub enum FromWireError {
    /// A required field is absent.
    #[error("{at}: missing {field}")]
    Missing {
        /// Where the message is.
        at: String,
        /// The field.
        field: &'static str,
    },
    /// An enum field holds a value the `.proto` does not define.
    #[error("{at}: {field} has unknown value {value}")]
    UnknownEnum {
        /// Where the message is.
        at: String,
        /// The field.
        field: &'static str,
        /// The value it holds.
        value: i32,
    },
    /// A call of a Func the pipeline does not define.
    #[error("{at}: calls unknown Func {callee}")]
    UnknownFunc {
        /// Where the call is.
        at: String,
        /// The name called.
        callee: String,
    },
    /// A call of a Func listed after the caller.
    #[error("{at}: calls Func {callee}, which is listed after it (Funcs are listed producers first)")]
    CallsLater {
        /// Where the call is.
        at: String,
        /// The Func called.
        callee: String,
    },
    /// A call, or an update's left-hand side, with the wrong number of arguments.
    #[error("{at}: calls {callee} with {got} coordinates, but it has {expected} dimensions")]
    Arity {
        /// Where the call is.
        at: String,
        /// The Func or math function called.
        callee: String,
        /// The arguments it takes.
        expected: usize,
        /// The arguments given.
        got: usize,
    },
    /// Two Funcs of one name.
    #[error("Func {name} is defined twice")]
    DuplicateFunc {
        /// The name.
        name: String,
    },
    /// Any other invalid value, with the reason.
    #[error("{at}: {why}")]
    Invalid {
        /// Where the value is.
        at: String,
        /// What is wrong with it.
        why: String,
    },
    /// A name or other string longer than its limit.
    #[error("{at}: {what} {text} is longer than the {max} bytes it may have")]
    TooLong {
        /// Where the string is.
        at: String,
        /// What the string is.
        what: String,
        /// The string, cut short as `quote` cuts it.
        text: String,
        /// Its limit, in bytes.
        max: usize,
    },
    /// A pipeline with more Funcs or expression nodes than a request may have.
    #[error("the pipeline has more {what} than the {max} a request may have")]
    TooLarge {
        /// What there are too many of (`Funcs`, `expression nodes`).
        what: &'static str,
        /// The limit.
        max: usize,
    },
    /// The rebuilt pipeline fails the compiler's own checks.
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
    /// A vector type or a node only lowering makes.
    #[error("{at}: {what} has no wire form (algorithms are scalar and hold no lowered nodes)")]
    NotAnAlgorithm {
        /// Where the value is.
        at: String,
        /// What it is.
        what: String,
    },
    /// An expression nested deeper than the wire decodes.
    #[error(
        "{at}: an expression is nested more than {max} deep, more than the wire decodes (bind parts with lets or compute them in Funcs)"
    )]
    TooDeep {
        /// Where the expression is.
        at: String,
        /// The deepest nesting the wire decodes (`MAX_EXPR_DEPTH`).
        max: usize,
    },
}
