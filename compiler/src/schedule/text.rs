//! The text form of schedules: one directive per line, as a person would
//! write it (`out.split(y, yo, yi, 8)`, `blur_x.compute_at(out, yo)`), and a
//! parser that reads it back into the same [`Schedule`].
//!
//! [`schedule_to_text`] (also `Display for Schedule`) writes the Funcs in the
//! schedule's map order; for each Func its compute level (always, so every
//! scheduled Func appears), its store level, storage order and bounds when
//! set, then the directives of each stage in stage order, the pure stage as
//! `f.directive(...)` and update `i` as `f.update(i).directive(...)`. A stage
//! that is present with no directives is written as its bare prefix (`f` or
//! `f.update(i)`).
//!
//! [`parse_schedule`] (also `FromStr for Schedule`) reads that form back:
//! `#` starts a comment, blank lines are ignored, and a line may chain
//! several calls (`out.split(x, xo, xi, 8).vectorize(xi)`), which means the
//! same as one call per line. Func-level calls (`compute_at`, `store_root`,
//! `reorder_storage`, `bound`, ...) may not follow `update(i)`. Every error is
//! a [`ParseError`] naming the 1-based line and column and the
//! [`ParseProblem`]; no input makes the parser panic.
//!
//! Names are non-empty and made of letters, digits, `_`, `.` and `$` (the
//! characters the language uses: `r.x`, `f$3`); a schedule whose names use
//! other characters is written, but its text does not parse back.

use crate::ir::expr::Name;
use crate::schedule::{Bound, Directive, FuncSchedule, LoopLevel, Schedule, TailStrategy};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

fn tail_suffix(tail: TailStrategy) -> String {
    if tail == TailStrategy::Auto {
        String::new()
    } else {
        format!(", {}", tail.name())
    }
}

/// The source text of one directive, e.g. `split(x, xo, xi, 8)`.
pub fn directive_text(d: &Directive) -> String {
    match d {
        Directive::Split { var, outer, inner, factor, tail } => {
            format!("split({var}, {outer}, {inner}, {factor}{})", tail_suffix(*tail))
        }
        Directive::Fuse { inner, outer, fused } => format!("fuse({inner}, {outer}, {fused})"),
        Directive::Reorder { vars } => {
            format!("reorder({})", vars.iter().map(|v| &**v).collect::<Vec<_>>().join(", "))
        }
        Directive::Tile { x, y, xo, yo, xi, yi, x_factor, y_factor, tail } => {
            format!("tile({x}, {y}, {xo}, {yo}, {xi}, {yi}, {x_factor}, {y_factor}{})", tail_suffix(*tail))
        }
        Directive::Vectorize { var, width: Some(w) } => format!("vectorize({var}, {w})"),
        Directive::Vectorize { var, width: None } => format!("vectorize({var})"),
        Directive::Unroll { var, factor: Some(f) } => format!("unroll({var}, {f})"),
        Directive::Unroll { var, factor: None } => format!("unroll({var})"),
        Directive::Parallel { var } => format!("parallel({var})"),
        Directive::Serial { var } => format!("serial({var})"),
        Directive::GpuBlocks { var } => format!("gpu_blocks({var})"),
        Directive::GpuThreads { var } => format!("gpu_threads({var})"),
    }
}

/// `g` for the pure stage of `g`, `g.update(i)` for stage `i + 1`.
fn stage_ref(func: &str, stage: usize) -> String {
    match stage.checked_sub(1) {
        None => func.to_string(),
        Some(update) => format!("{func}.update({update})"),
    }
}

fn level_call(prefix: &str, level: &LoopLevel) -> String {
    match level {
        LoopLevel::Inline => format!("{prefix}_inline()"),
        LoopLevel::Root => format!("{prefix}_root()"),
        LoopLevel::At { func, stage, var } => {
            format!("{prefix}_at({}, {var})", stage_ref(func, *stage))
        }
    }
}

fn join_names(names: &[Name]) -> String {
    names.iter().map(|n| &**n).collect::<Vec<_>>().join(", ")
}

fn write_func(f: &mut fmt::Formatter<'_>, name: &str, fs: &FuncSchedule) -> fmt::Result {
    writeln!(f, "{name}.{}", level_call("compute", &fs.compute))?;
    if let Some(store) = &fs.store {
        writeln!(f, "{name}.{}", level_call("store", store))?;
    }
    if let Some(order) = &fs.storage_order {
        writeln!(f, "{name}.reorder_storage({})", join_names(order))?;
    }
    for b in &fs.bounds {
        writeln!(f, "{name}.bound({}, {}, {})", b.var, b.min, b.extent)?;
    }
    for (&stage, s) in &fs.stages {
        let prefix = stage_ref(name, stage);
        if s.directives.is_empty() {
            writeln!(f, "{prefix}")?;
        }
        for d in &s.directives {
            writeln!(f, "{prefix}.{}", directive_text(d))?;
        }
    }
    Ok(())
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, fs) in &self.funcs {
            write_func(f, name, fs)?;
        }
        Ok(())
    }
}

/// The text form of a whole schedule (see the module documentation).
pub fn schedule_to_text(s: &Schedule) -> String {
    s.to_string()
}

impl FromStr for Schedule {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Schedule, ParseError> {
        parse_schedule(text)
    }
}

/// Schedule text that does not parse: where, and what is wrong.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("schedule text, line {line}, column {column}: {problem}")]
pub struct ParseError {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column, in characters, of the token at fault (one past
    /// the line's last character when the line ends too early).
    pub column: usize,
    /// What is wrong.
    pub problem: ParseProblem,
}

/// An argument of a call, by its 1-based position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Argument {
    /// The directive called (`split`, `compute_at`, ...).
    pub call: String,
    /// 1 for the first argument.
    pub position: usize,
}

impl fmt::Display for Argument {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "argument {} of {}", self.position, self.call)
    }
}

/// What is wrong with a line of schedule text.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ParseProblem {
    /// A character that is not part of a word, a parenthesis or a comma.
    #[error("unexpected character `{}`", .0.escape_default())]
    UnexpectedCharacter(char),
    /// A parenthesis where a name or an argument should start.
    #[error("unexpected `{found}`: expected a name")]
    ExpectedName {
        /// The parenthesis found.
        found: char,
    },
    /// A comma where a name or an argument should start.
    #[error("empty argument before `,`")]
    EmptyArgumentBeforeComma,
    /// The line ends where a name or an argument should start.
    #[error("the line ends where a name was expected")]
    LineEndsBeforeName,
    /// A call inside a call inside a call (only `g.update(i)` may appear as
    /// an argument).
    #[error("parentheses nested too deeply after `{word}`")]
    NestedTooDeeply {
        /// The call nested too deeply.
        word: String,
    },
    /// The line ends inside a call's parentheses.
    #[error("unclosed parenthesis after `{call}`")]
    Unclosed {
        /// The call.
        call: String,
    },
    /// A call with an empty argument (`f(a, )`).
    #[error("empty argument in `{call}(...)`")]
    EmptyArgument {
        /// The call.
        call: String,
    },
    /// Something other than `,` or `)` after an argument.
    #[error("expected `,` or `)` in `{call}(...)`, found `{found}`")]
    ExpectedCommaOrClose {
        /// The call.
        call: String,
        /// What was found.
        found: String,
    },
    /// A call of a directive the text form does not know.
    #[error("unknown directive `{call}`")]
    UnknownDirective {
        /// The name called.
        call: String,
    },
    /// A directive called with too few or too many arguments.
    #[error("wrong number of arguments for {call}: found {found}, expected {usage}")]
    ArgumentCount {
        /// The directive.
        call: String,
        /// The number of arguments given.
        found: usize,
        /// The directive's usage.
        usage: &'static str,
    },
    /// A call where a plain word (a name or a number) is expected.
    #[error("{argument} ({what}) must be a plain word, found `{found}`")]
    NotAWord {
        /// The argument.
        argument: Argument,
        /// What it should be (`a name`, `an integer`, ...).
        what: &'static str,
        /// The call found.
        found: String,
    },
    /// A word that cannot be a Func or loop name (empty, or with a `-`).
    #[error("{}`{word}` is not a name (names use letters, digits, `_`, `.` and `$`)", argument.as_ref().map_or(String::new(), |a| format!("{a}: ")))]
    NotAName {
        /// The word.
        word: String,
        /// The argument it is, if it is one.
        argument: Option<Argument>,
    },
    /// An argument that should be an integer but does not parse as an `i64`.
    #[error("bad integer `{word}` ({argument})")]
    BadInteger {
        /// The word.
        word: String,
        /// The argument it is.
        argument: Argument,
    },
    /// A tail strategy other than `auto`, `shift_inwards`, `guard_with_if`
    /// and `round_up`.
    #[error("unknown tail strategy `{word}` in {call} (expected auto, shift_inwards, guard_with_if or round_up)")]
    UnknownTail {
        /// The word.
        word: String,
        /// The directive.
        call: String,
    },
    /// A loop level's stage that is neither `func` nor `func.update(i)`.
    #[error("{argument} must be `func` or `func.update(i)`, found `{found}`")]
    NotAStage {
        /// The argument.
        argument: Argument,
        /// What was found.
        found: String,
    },
    /// An update index that is not a non-negative integer.
    #[error("bad update index `{word}`")]
    BadUpdateIndex {
        /// The word.
        word: String,
    },
    /// A line that starts with a call but names no Func before it.
    #[error("`{head}(...)` with no Func; write `func.{}(...)`", head.trim_start_matches('.'))]
    NoFunc {
        /// The call as written.
        head: String,
    },
    /// `update(i)` anywhere but right after the Func's name.
    #[error("`{call}(...)` must come right after the Func name")]
    MustFollowFuncName {
        /// The call.
        call: String,
    },
    /// A directive written without its parentheses.
    #[error("`{call}` needs parentheses: `{written}(...)`")]
    NeedsParentheses {
        /// The directive.
        call: String,
        /// The directive as written.
        written: String,
    },
    /// A parenthesis or comma after a call, where `.directive(...)` or the
    /// line's end should come.
    #[error("unexpected `{found}` after a call")]
    UnexpectedAfterCall {
        /// What was found.
        found: String,
    },
    /// A word without the leading `.` after a call.
    #[error("expected `.directive(...)` after a call, found `{found}`")]
    ExpectedDirective {
        /// The word found.
        found: String,
    },
    /// A `.` with no directive name after it.
    #[error("expected a directive name right after `.`")]
    MissingDirectiveName,
    /// A Func-level call (compute or store level, storage order, bound) after
    /// `update(i)` on one line.
    #[error("{call} applies to the whole Func; it cannot follow update({update})")]
    FuncLevelAfterUpdate {
        /// The Func-level call.
        call: String,
        /// The update's index.
        update: usize,
    },
}

/// A problem and the column where it is (0-based, in characters of the
/// line with its indentation and comment removed).
type Failed = (usize, ParseProblem);

/// Reads the text form back into a schedule; errors name the line, the
/// column and the problem.
pub fn parse_schedule(text: &str) -> Result<Schedule, ParseError> {
    let mut schedule = Schedule::new();
    for (i, raw) in text.lines().enumerate() {
        let code = raw.split_once('#').map_or(raw, |(code, _)| code);
        let line = code.trim();
        if !line.is_empty() {
            let indent = code.chars().take_while(|c| c.is_whitespace()).count();
            parse_line(line, &mut schedule).map_err(|(at, problem)| ParseError { line: i + 1, column: indent + at + 1, problem })?;
        }
    }
    Ok(schedule)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Open,
    Close,
    Comma,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// The tokens of a line, each with the column where it starts.
fn tokenize(line: &str) -> Result<Vec<(Token, usize)>, Failed> {
    let mut tokens = vec![];
    let mut chars = line.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        let token = match c {
            '(' => Token::Open,
            ')' => Token::Close,
            ',' => Token::Comma,
            c if c.is_whitespace() => continue,
            c if is_word_char(c) => {
                let mut word = c.to_string();
                while let Some(&(_, next)) = chars.peek().filter(|(_, n)| is_word_char(*n)) {
                    word.push(next);
                    chars.next();
                }
                Token::Word(word)
            }
            c => return Err((at, ParseProblem::UnexpectedCharacter(c))),
        };
        tokens.push((token, at));
    }
    Ok(tokens)
}

/// A word, or a word applied to arguments, and the column where it starts.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    at: usize,
    word: String,
    args: Option<Vec<Term>>,
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.word)?;
        if let Some(args) = &self.args {
            let args: Vec<String> = args.iter().map(Term::to_string).collect();
            write!(f, "({})", args.join(", "))?;
        }
        Ok(())
    }
}

/// Calls may take calls as arguments (`g.update(0)`), but no deeper.
const MAX_NESTING: usize = 2;

struct Tokens {
    tokens: Vec<(Token, usize)>,
    pos: usize,
    /// The column past the line's last character.
    end: usize,
}

impl Tokens {
    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.pos);
        self.pos += 1;
        t.map(|(t, _)| t)
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos).map(|(t, _)| t)
    }

    /// The column of the next token, or the line's end.
    fn column(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |&(_, at)| at)
    }

    fn term(&mut self, depth: usize) -> Result<Term, Failed> {
        let at = self.column();
        let word = match self.next() {
            Some(Token::Word(w)) => w.clone(),
            Some(Token::Open) => return Err((at, ParseProblem::ExpectedName { found: '(' })),
            Some(Token::Close) => return Err((at, ParseProblem::ExpectedName { found: ')' })),
            Some(Token::Comma) => return Err((at, ParseProblem::EmptyArgumentBeforeComma)),
            None => return Err((at, ParseProblem::LineEndsBeforeName)),
        };
        if self.peek() != Some(&Token::Open) {
            return Ok(Term { at, word, args: None });
        }
        if depth >= MAX_NESTING {
            return Err((self.column(), ParseProblem::NestedTooDeeply { word }));
        }
        self.pos += 1;
        let mut args = vec![];
        if self.peek() == Some(&Token::Close) {
            self.pos += 1;
            return Ok(Term { at, word, args: Some(args) });
        }
        loop {
            match self.peek() {
                None => return Err((self.column(), ParseProblem::Unclosed { call: word })),
                Some(Token::Comma | Token::Close) => return Err((self.column(), ParseProblem::EmptyArgument { call: word })),
                Some(_) => args.push(self.term(depth + 1)?),
            }
            let after = self.column();
            match self.next() {
                Some(Token::Comma) => {}
                Some(Token::Close) => return Ok(Term { at, word, args: Some(args) }),
                None => return Err((after, ParseProblem::Unclosed { call: word })),
                Some(t) => {
                    let found = token_text(t).to_string();
                    return Err((after, ParseProblem::ExpectedCommaOrClose { call: word, found }));
                }
            }
        }
    }
}

/// Every call the text form knows: name, fewest and most arguments (`None`:
/// any number), and its usage.
const CALLS: &[(&str, usize, Option<usize>, &str)] = &[
    ("split", 4, Some(5), "split(var, outer, inner, factor[, tail])"),
    ("fuse", 3, Some(3), "fuse(inner, outer, fused)"),
    ("reorder", 0, None, "reorder(var, ...)"),
    ("tile", 8, Some(9), "tile(x, y, xo, yo, xi, yi, x_factor, y_factor[, tail])"),
    ("vectorize", 1, Some(2), "vectorize(var[, width])"),
    ("unroll", 1, Some(2), "unroll(var[, factor])"),
    ("parallel", 1, Some(1), "parallel(var)"),
    ("serial", 1, Some(1), "serial(var)"),
    ("gpu_blocks", 1, Some(1), "gpu_blocks(var)"),
    ("gpu_threads", 1, Some(1), "gpu_threads(var)"),
    ("compute_root", 0, Some(0), "compute_root()"),
    ("compute_inline", 0, Some(0), "compute_inline()"),
    ("compute_at", 2, Some(2), "compute_at(func[.update(i)], var)"),
    ("store_root", 0, Some(0), "store_root()"),
    ("store_inline", 0, Some(0), "store_inline()"),
    ("store_at", 2, Some(2), "store_at(func[.update(i)], var)"),
    ("reorder_storage", 0, None, "reorder_storage(var, ...)"),
    ("bound", 3, Some(3), "bound(var, min, extent)"),
    ("update", 1, Some(1), "update(index)"),
];

/// One call of a line's chain: its name, where the name starts, and its
/// arguments.
struct Call {
    name: String,
    at: usize,
    args: Vec<Term>,
}

/// The arguments of one call, read by position.
struct Args<'a> {
    call: &'a str,
    at: usize,
    args: &'a [Term],
}

impl<'a> Args<'a> {
    /// Checks the call (named at column `at`) is known and has an allowed
    /// number of arguments.
    fn new(call: &'a str, at: usize, args: &'a [Term]) -> Result<Args<'a>, Failed> {
        let &(_, min, max, usage) =
            CALLS.iter().find(|c| c.0 == call).ok_or_else(|| (at, ParseProblem::UnknownDirective { call: call.to_string() }))?;
        let found = args.len();
        if found < min || max.is_some_and(|max| found > max) {
            return Err((at, ParseProblem::ArgumentCount { call: call.to_string(), found, usage }));
        }
        Ok(Args { call, at, args })
    }

    fn argument(&self, i: usize) -> Argument {
        Argument { call: self.call.to_string(), position: i + 1 }
    }

    fn word(&self, i: usize, what: &'static str) -> Result<&'a str, Failed> {
        let t = &self.args[i];
        match &t.args {
            None => Ok(&t.word),
            Some(_) => Err((t.at, ParseProblem::NotAWord { argument: self.argument(i), what, found: t.to_string() })),
        }
    }

    fn name(&self, i: usize) -> Result<Name, Failed> {
        let w = self.word(i, "a name")?;
        name(w, self.args[i].at, Some(self.argument(i)))
    }

    fn names(&self) -> Result<Vec<Name>, Failed> {
        (0..self.args.len()).map(|i| self.name(i)).collect()
    }

    fn int(&self, i: usize) -> Result<i64, Failed> {
        let w = self.word(i, "an integer")?;
        w.parse().map_err(|_| (self.args[i].at, ParseProblem::BadInteger { word: w.to_string(), argument: self.argument(i) }))
    }

    fn opt_int(&self, i: usize) -> Result<Option<i64>, Failed> {
        (i < self.args.len()).then(|| self.int(i)).transpose()
    }

    fn tail(&self, i: usize) -> Result<TailStrategy, Failed> {
        if i >= self.args.len() {
            return Ok(TailStrategy::Auto);
        }
        let w = self.word(i, "a tail strategy")?;
        TailStrategy::from_name(w)
            .ok_or_else(|| (self.args[i].at, ParseProblem::UnknownTail { word: w.to_string(), call: self.call.to_string() }))
    }

    /// A loop level's stage: `g` (its pure stage) or `g.update(i)`.
    fn stage_ref(&self, i: usize) -> Result<(Name, usize), Failed> {
        let t = &self.args[i];
        let Some(args) = &t.args else {
            return Ok((name(&t.word, t.at, None)?, 0));
        };
        let (func, call, call_at) = split_head(&t.word, t.at)?;
        if call != "update" {
            return Err((t.at, ParseProblem::NotAStage { argument: self.argument(i), found: t.to_string() }));
        }
        Ok((func, update_stage(&Args::new(call, call_at, args)?)?))
    }

    fn level(&self) -> Result<LoopLevel, Failed> {
        let (func, stage) = self.stage_ref(0)?;
        Ok(LoopLevel::At { func, stage, var: self.name(1)? })
    }
}

/// `w`, found at column `at` (as `argument`, if one), as a name.
fn name(w: &str, at: usize, argument: Option<Argument>) -> Result<Name, Failed> {
    if w.is_empty() || w.contains('-') {
        return Err((at, ParseProblem::NotAName { word: w.to_string(), argument }));
    }
    Ok(w.into())
}

/// Splits `f.split`, found at column `at`, into the Func `f`, the call
/// `split` and the call's column.
fn split_head(head: &str, at: usize) -> Result<(Name, &str, usize), Failed> {
    match head.rsplit_once('.') {
        Some((func, call)) if !func.is_empty() => Ok((name(func, at, None)?, call, at + func.chars().count() + 1)),
        _ => Err((at, ParseProblem::NoFunc { head: head.to_string() })),
    }
}

/// The stage an `update(i)` call selects.
fn update_stage(args: &Args<'_>) -> Result<usize, Failed> {
    let w = args.word(0, "an update index")?;
    let stage = w.parse::<usize>().ok().and_then(|i| i.checked_add(1));
    stage.ok_or_else(|| (args.args[0].at, ParseProblem::BadUpdateIndex { word: w.to_string() }))
}

/// What one call of a line does.
enum Action {
    Stage(Directive),
    Compute(LoopLevel),
    Store(LoopLevel),
    StorageOrder(Vec<Name>),
    Bound(Bound),
}

fn action(a: &Args<'_>) -> Result<Action, Failed> {
    let var = || a.name(0);
    let stage = |d: Directive| Ok(Action::Stage(d));
    match a.call {
        "split" => stage(Directive::Split { var: var()?, outer: a.name(1)?, inner: a.name(2)?, factor: a.int(3)?, tail: a.tail(4)? }),
        "fuse" => stage(Directive::Fuse { inner: var()?, outer: a.name(1)?, fused: a.name(2)? }),
        "reorder" => stage(Directive::Reorder { vars: a.names()? }),
        "tile" => stage(Directive::Tile {
            x: var()?,
            y: a.name(1)?,
            xo: a.name(2)?,
            yo: a.name(3)?,
            xi: a.name(4)?,
            yi: a.name(5)?,
            x_factor: a.int(6)?,
            y_factor: a.int(7)?,
            tail: a.tail(8)?,
        }),
        "vectorize" => stage(Directive::Vectorize { var: var()?, width: a.opt_int(1)? }),
        "unroll" => stage(Directive::Unroll { var: var()?, factor: a.opt_int(1)? }),
        "parallel" => stage(Directive::Parallel { var: var()? }),
        "serial" => stage(Directive::Serial { var: var()? }),
        "gpu_blocks" => stage(Directive::GpuBlocks { var: var()? }),
        "gpu_threads" => stage(Directive::GpuThreads { var: var()? }),
        "compute_root" => Ok(Action::Compute(LoopLevel::Root)),
        "compute_inline" => Ok(Action::Compute(LoopLevel::Inline)),
        "compute_at" => Ok(Action::Compute(a.level()?)),
        "store_root" => Ok(Action::Store(LoopLevel::Root)),
        "store_inline" => Ok(Action::Store(LoopLevel::Inline)),
        "store_at" => Ok(Action::Store(a.level()?)),
        "reorder_storage" => Ok(Action::StorageOrder(a.names()?)),
        "bound" => Ok(Action::Bound(Bound { var: var()?, min: a.int(1)?, extent: a.int(2)? })),
        call => Err((a.at, ParseProblem::MustFollowFuncName { call: call.to_string() })),
    }
}

/// Reads one non-empty line (comments and indentation removed) into
/// `schedule`.
fn parse_line(line: &str, schedule: &mut Schedule) -> Result<(), Failed> {
    let mut tokens = Tokens { tokens: tokenize(line)?, pos: 0, end: line.chars().count() };
    let Term { at, word, args } = tokens.term(0)?;
    let (func, mut calls) = match args {
        None => {
            if let Some((_, call)) = word.rsplit_once('.').filter(|(_, call)| CALLS.iter().any(|c| c.0 == *call)) {
                return Err((at, ParseProblem::NeedsParentheses { call: call.to_string(), written: word.clone() }));
            }
            (name(&word, at, None)?, vec![])
        }
        Some(args) => {
            let (func, call, call_at) = split_head(&word, at)?;
            (func, vec![Call { name: call.to_string(), at: call_at, args }])
        }
    };
    loop {
        let at = tokens.column();
        let Some(token) = tokens.next() else { break };
        let Token::Word(w) = token else {
            return Err((at, ParseProblem::UnexpectedAfterCall { found: token_text(token).to_string() }));
        };
        let call = w.strip_prefix('.').ok_or_else(|| (at, ParseProblem::ExpectedDirective { found: w.clone() }))?.to_string();
        if call.is_empty() {
            return Err((at, ParseProblem::MissingDirectiveName));
        }
        tokens.pos -= 1;
        match tokens.term(0)?.args {
            Some(args) => calls.push(Call { name: call, at: at + 1, args }),
            None => return Err((at, ParseProblem::NeedsParentheses { written: format!(".{call}"), call })),
        }
    }
    apply_calls(schedule.funcs.entry(func).or_default(), &calls)
}

fn token_text(t: &Token) -> &str {
    match t {
        Token::Word(w) => w,
        Token::Open => "(",
        Token::Close => ")",
        Token::Comma => ",",
    }
}

/// Applies a line's chain of calls to one Func's schedule.
fn apply_calls(fs: &mut FuncSchedule, calls: &[Call]) -> Result<(), Failed> {
    let mut stage = 0;
    let mut rest = calls;
    if let Some((update, after)) = calls.split_first().filter(|(c, _)| c.name == "update") {
        stage = update_stage(&Args::new(&update.name, update.at, &update.args)?)?;
        rest = after;
    }
    if rest.is_empty() {
        fs.stages.entry(stage).or_default();
    }
    for call in rest {
        let a = Args::new(&call.name, call.at, &call.args)?;
        match action(&a)? {
            Action::Stage(d) => fs.stages.entry(stage).or_default().directives.push(d),
            _ if stage > 0 => {
                return Err((call.at, ParseProblem::FuncLevelAfterUpdate { call: call.name.clone(), update: stage - 1 }));
            }
            Action::Compute(level) => fs.compute = level,
            Action::Store(level) => fs.store = Some(level),
            Action::StorageOrder(order) => fs.storage_order = Some(order),
            Action::Bound(b) => fs.bounds.push(b),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::StageSchedule;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn example() -> Schedule {
        let mut s = Schedule::new();
        s.func("blur_x").compute_at("out", "yo").store_root().split("x", "xo", "xi", 8).vectorize("xi");
        s.func("out").compute_root().tile("x", "y", "xo", "yo", "xi", "yi", 64, 32).parallel("yo");
        s.func("hist").compute_root().update(0).reorder(&["r.x", "r.y"]);
        s.func("hist").update(1).vectorize_by("x", 8);
        s.func("f").compute_at_stage("g", 1, "y").store_at("g", "y").reorder_storage(&["y", "x"]).bound("x", 0, 64).split_with(
            "x",
            "xo",
            "xi",
            8,
            TailStrategy::GuardWithIf,
        );
        s
    }

    const EXAMPLE_TEXT: &str = "\
blur_x.compute_at(out, yo)
blur_x.store_root()
blur_x.split(x, xo, xi, 8)
blur_x.vectorize(xi)
f.compute_at(g.update(0), y)
f.store_at(g, y)
f.reorder_storage(y, x)
f.bound(x, 0, 64)
f.split(x, xo, xi, 8, guard_with_if)
hist.compute_root()
hist.update(0).reorder(r.x, r.y)
hist.update(1).vectorize(x, 8)
out.compute_root()
out.tile(x, y, xo, yo, xi, yi, 64, 32)
out.parallel(yo)
";

    fn parse(text: &str) -> Schedule {
        parse_schedule(text).unwrap_or_else(|e| panic!("{e}\nin:\n{text}"))
    }

    fn assert_round_trip(s: &Schedule) {
        let text = schedule_to_text(s);
        assert_eq!(&parse(&text), s, "text:\n{text}");
        assert_eq!(text.parse::<Schedule>().as_ref(), Ok(s));
    }

    #[test]
    fn exact_text_of_a_hand_built_schedule() {
        let s = example();
        assert_eq!(schedule_to_text(&s), EXAMPLE_TEXT);
        assert_eq!(s.to_string(), EXAMPLE_TEXT);
        assert_eq!(parse(EXAMPLE_TEXT), s);
    }

    #[test]
    fn round_trips_builder_schedules() {
        let mut schedules = vec![Schedule::new(), example()];
        let mut s = Schedule::new();
        s.func("a").compute_inline();
        s.func("b$0").compute_root().store_root();
        schedules.push(s);
        for tail in [TailStrategy::Auto, TailStrategy::ShiftInwards, TailStrategy::GuardWithIf, TailStrategy::RoundUp] {
            let mut s = Schedule::new();
            s.func("in.0")
                .compute_at_stage("out", 2, "x.xo")
                .store_at_stage("out", 1, "y")
                .split_with("x", "x.xo", "x.xi", 3, tail)
                .fuse("x.xi", "y", "t")
                .unroll("t")
                .unroll_by("x.xo", 4)
                .serial("c")
                .gpu_blocks("yo")
                .gpu_threads("xo")
                .vectorize("v")
                .update(3)
                .split_with("r.x", "ro", "ri", 16, tail)
                .reorder(&["ri", "ro", "y"])
                .parallel("y");
            s.func("out").compute_root().reorder_storage(&[]).bound("x", -5, 100).bound("y", 0, 1).update(0).reorder(&[]);
            schedules.push(s);
        }
        for s in &schedules {
            assert_round_trip(s);
        }
    }

    const NAMES: &[&str] = &["x", "y", "c", "r.x", "r.y", "x.xo", "xi", "f$3", "in_0", "_t9", "Out"];
    const TAILS: [TailStrategy; 4] = [TailStrategy::Auto, TailStrategy::ShiftInwards, TailStrategy::GuardWithIf, TailStrategy::RoundUp];

    fn random_name(rng: &mut ChaCha8Rng) -> Name {
        NAMES[rng.random_range(0..NAMES.len())].into()
    }

    fn random_int(rng: &mut ChaCha8Rng) -> i64 {
        match rng.random_range(0..4) {
            0 => rng.random(),
            _ => rng.random_range(-3..70),
        }
    }

    fn random_level(rng: &mut ChaCha8Rng) -> LoopLevel {
        match rng.random_range(0..3) {
            0 => LoopLevel::Inline,
            1 => LoopLevel::Root,
            _ => LoopLevel::At { func: random_name(rng), stage: rng.random_range(0..4), var: random_name(rng) },
        }
    }

    fn random_directive(rng: &mut ChaCha8Rng) -> Directive {
        let mut n = || random_name(rng);
        let (a, b, c, d, e, f) = (n(), n(), n(), n(), n(), n());
        let tail = TAILS[rng.random_range(0..4)];
        let opt = |rng: &mut ChaCha8Rng| rng.random_bool(0.5).then(|| random_int(rng));
        match rng.random_range(0..10) {
            0 => Directive::Split { var: a, outer: b, inner: c, factor: random_int(rng), tail },
            1 => Directive::Fuse { inner: a, outer: b, fused: c },
            2 => Directive::Reorder { vars: (0..rng.random_range(0..4)).map(|_| random_name(rng)).collect() },
            3 => Directive::Tile { x: a, y: b, xo: c, yo: d, xi: e, yi: f, x_factor: random_int(rng), y_factor: random_int(rng), tail },
            4 => Directive::Vectorize { var: a, width: opt(rng) },
            5 => Directive::Unroll { var: a, factor: opt(rng) },
            6 => Directive::Parallel { var: a },
            7 => Directive::Serial { var: a },
            8 => Directive::GpuBlocks { var: a },
            _ => Directive::GpuThreads { var: a },
        }
    }

    /// Any schedule data, including shapes the builder does not make (empty
    /// stages, inline store levels, empty storage orders).
    fn random_schedule_data(rng: &mut ChaCha8Rng) -> Schedule {
        let mut s = Schedule::new();
        for _ in 0..rng.random_range(0..5) {
            let mut fs = FuncSchedule { compute: random_level(rng), ..FuncSchedule::default() };
            if rng.random_bool(0.5) {
                fs.store = Some(random_level(rng));
            }
            if rng.random_bool(0.3) {
                fs.storage_order = Some((0..rng.random_range(0..3)).map(|_| random_name(rng)).collect());
            }
            for _ in 0..rng.random_range(0..3) {
                fs.bounds.push(Bound { var: random_name(rng), min: random_int(rng), extent: random_int(rng) });
            }
            for _ in 0..rng.random_range(0..4) {
                let directives = (0..rng.random_range(0..4)).map(|_| random_directive(rng)).collect();
                fs.stages.insert(rng.random_range(0..4), StageSchedule { directives });
            }
            s.funcs.insert(random_name(rng), fs);
        }
        s
    }

    #[test]
    fn round_trips_random_schedule_data() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..500 {
            assert_round_trip(&random_schedule_data(&mut rng));
        }
    }

    #[test]
    fn empty_stages_are_kept() {
        let mut s = Schedule::new();
        let fs = s.funcs.entry("f".into()).or_default();
        fs.stages.insert(0, StageSchedule::default());
        fs.stages.insert(2, StageSchedule::default());
        assert_eq!(s.to_string(), "f.compute_inline()\nf\nf.update(1)\n");
        assert_round_trip(&s);
    }

    #[test]
    fn chains_mean_the_same_as_separate_lines() {
        let chained = "out.compute_root().split(x, xo, xi, 8).vectorize(xi)\nout.update(0).split(r.x, ro, ri, 4, guard_with_if).unroll(ri)";
        let separate = "out.compute_root()\nout.split(x, xo, xi, 8)\nout.vectorize(xi)\n\
                        out.update(0).split(r.x, ro, ri, 4, guard_with_if)\nout.update(0).unroll(ri)";
        let mut expected = Schedule::new();
        expected.func("out").compute_root().split("x", "xo", "xi", 8).vectorize("xi");
        expected.func("out").update(0).split_with("r.x", "ro", "ri", 4, TailStrategy::GuardWithIf).unroll("ri");
        assert_eq!(parse(chained), expected);
        assert_eq!(parse(separate), expected);
    }

    #[test]
    fn comments_blank_lines_and_spacing_are_ignored() {
        let text =
            "# a schedule\n\n   \nblur_x.compute_at( out , yo )  # inside out's rows\r\n\t# indented comment\nblur_x.vectorize( x,8 )\n";
        let mut expected = Schedule::new();
        expected.func("blur_x").compute_at("out", "yo").vectorize_by("x", 8);
        assert_eq!(parse(text), expected);
        assert_eq!(parse("# nothing\n\n"), Schedule::new());
        assert_eq!(parse(""), Schedule::new());
    }

    #[test]
    fn later_levels_replace_earlier_ones_and_bounds_accumulate() {
        let text = "f.compute_root()\nf.compute_at(g, x)\nf.store_root()\nf.store_at(g.update(2), y)\nf.bound(x, 0, 4)\nf.bound(y, 1, 2)";
        let mut expected = Schedule::new();
        expected.func("f").compute_at("g", "x").store_at_stage("g", 3, "y").bound("x", 0, 4).bound("y", 1, 2);
        assert_eq!(parse(text), expected);
    }

    #[test]
    fn malformed_inputs_name_the_line_and_the_problem() {
        let cases: &[(&str, usize, &str)] = &[
            ("f.foo(x)", 1, "unknown directive `foo`"),
            ("f.compute_root()\n\nf.split(x, xo, xi)", 3, "wrong number of arguments for split: found 3"),
            ("f.split(x, xo, xi, eight)", 1, "bad integer `eight`"),
            ("# c\nf.split(x, xo, xi, 8, sideways)", 2, "unknown tail strategy `sideways`"),
            ("f.split(x, xo, xi, 8", 1, "unclosed parenthesis after `f.split`"),
            ("f.vectorize(x))", 1, "unexpected `)`"),
            ("f.update(x).vectorize(y)", 1, "bad update index `x`"),
            ("f.update(-1).vectorize(y)", 1, "bad update index `-1`"),
            ("f.update(0).compute_root()", 1, "compute_root applies to the whole Func"),
            ("f.split(x, xo, xi, 8).update(0)", 1, "`update(...)` must come right after the Func name"),
            ("f.parallel(x)\nf.vectorize", 2, "`vectorize` needs parentheses"),
            ("f.split(x, xo, xi, 8).vectorize", 1, "`vectorize` needs parentheses"),
            ("split(x, xo, xi, 8)", 1, "no Func"),
            ("f.parallel(x) junk", 1, "expected `.directive(...)` after a call, found `junk`"),
            ("f.compute_at(g.split(0), y)", 1, "must be `func` or `func.update(i)`"),
            ("f.compute_at(g)", 1, "wrong number of arguments for compute_at"),
            ("f.reorder(x, , y)", 1, "empty argument"),
            ("f.reorder(x, y,)", 1, "empty argument"),
            ("f.bound(x, 0, 1.5)", 1, "bad integer `1.5`"),
            ("f.split(x, xo, xi, 99999999999999999999)", 1, "bad integer `99999999999999999999`"),
            ("f.parallel(x%)", 1, "unexpected character `%`"),
            ("f.parallel(-x)", 1, "`-x` is not a name"),
            ("f.parallel(a(b(c)))", 1, "nested too deeply"),
            ("f.tile(x, y, xo, yo, xi, yi, 8)", 1, "wrong number of arguments for tile: found 7"),
            ("f.vectorize(x, 8, 2)", 1, "wrong number of arguments for vectorize: found 3"),
            ("f.parallel(g(x))", 1, "must be a plain word, found `g(x)`"),
            ("f.parallel(x)\n\n# c\ng.fuse(a, b)", 4, "wrong number of arguments for fuse"),
            ("f . vectorize(x)", 1, "expected a directive name right after `.`"),
            ("f.parallel(x) (y)", 1, "unexpected `(` after a call"),
            ("f.parallel(x y)", 1, "expected `,` or `)` in `f.parallel(...)`, found `y`"),
            ("f.parallel(x)\n.split(x, a, b, 2)", 2, "`.split(...)` with no Func"),
        ];
        for &(text, line, needle) in cases {
            match parse_schedule(text) {
                Err(ParseError { line: got, problem, .. }) => {
                    assert_eq!(got, line, "line of the error in {text:?} ({problem})");
                    let why = problem.to_string();
                    assert!(why.contains(needle), "error for {text:?} is {why:?}, which does not name {needle:?}");
                }
                other => panic!("{text:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn errors_name_the_column_of_the_token_at_fault() {
        let cases: &[(&str, usize, ParseProblem)] = &[
            ("f.foo(x)", 3, ParseProblem::UnknownDirective { call: "foo".into() }),
            (
                "  f.split(x, xo, xi, eight)",
                22,
                ParseProblem::BadInteger { word: "eight".into(), argument: Argument { call: "split".into(), position: 4 } },
            ),
            ("f.parallel(x).vectorize", 14, ParseProblem::NeedsParentheses { call: "vectorize".into(), written: ".vectorize".into() }),
            ("f.split(x, xo, xi, 8", 21, ParseProblem::Unclosed { call: "f.split".into() }),
            ("\tf.parallel(x%)", 14, ParseProblem::UnexpectedCharacter('%')),
            ("f.update(0).compute_root()", 13, ParseProblem::FuncLevelAfterUpdate { call: "compute_root".into(), update: 0 }),
            ("f.compute_at(g.update(x), y)", 23, ParseProblem::BadUpdateIndex { word: "x".into() }),
            (
                "f.parallel(-x)",
                12,
                ParseProblem::NotAName { word: "-x".into(), argument: Some(Argument { call: "parallel".into(), position: 1 }) },
            ),
        ];
        for (text, column, problem) in cases {
            let err = parse_schedule(text).unwrap_err();
            assert_eq!((&err.problem, err.column), (problem, *column), "{text:?}: {err}");
            assert!(err.to_string().starts_with(&format!("schedule text, line 1, column {column}: ")), "{err}");
        }
    }

    /// Whatever parses prints back to text that parses to the same schedule.
    fn parse_never_panics(text: &str) {
        if let Ok(s) = parse_schedule(text) {
            assert_round_trip(&s);
        }
    }

    #[test]
    fn arbitrary_text_never_panics() {
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let alphabet: Vec<char> = "fgxy0123._$-#(),. \n\tupdatesplitvectorize\u{e9}%".chars().collect();
        for _ in 0..300 {
            let bytes: Vec<u8> = (0..rng.random_range(0..80)).map(|_| rng.random()).collect();
            parse_never_panics(&String::from_utf8_lossy(&bytes));
            let text: String = (0..rng.random_range(0..80)).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
            parse_never_panics(&text);
        }
        let deep = "f.parallel(".repeat(10_000);
        assert!(parse_schedule(&deep).is_err());
    }

    #[test]
    fn truncated_and_mutated_text_never_panics() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100 {
            let text = schedule_to_text(&random_schedule_data(&mut rng));
            if text.is_empty() {
                continue;
            }
            let cut = rng.random_range(0..text.len());
            parse_never_panics(&text[..cut]);
            let mut mutated: Vec<char> = text.chars().collect();
            for _ in 0..3 {
                let at = rng.random_range(0..mutated.len());
                match rng.random_range(0..3) {
                    0 => {
                        mutated.remove(at);
                    }
                    1 => mutated.insert(at, ['(', ')', ',', '.', '#', '\n', '-', '9'][rng.random_range(0..8)]),
                    _ => {
                        let other = rng.random_range(0..mutated.len());
                        mutated.swap(at, other);
                    }
                }
                if mutated.is_empty() {
                    break;
                }
            }
            parse_never_panics(&mutated.into_iter().collect::<String>());
        }
    }
}
