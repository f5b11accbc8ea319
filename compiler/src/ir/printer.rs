//! Readable text for expressions and statements (`Display` impls).
//!
//! The lowered IR prints as an indented loop nest so that a person can check
//! what every pass did; the format is stable, which makes it usable in tests.

use crate::ir::expr::{BinOp, CallTarget, CmpOp, Expr, ExprNode};
use crate::ir::stmt::{Stmt, StmtNode};
use crate::ir::types::ScalarType;
use std::fmt::{self, Display, Formatter, Write};

/// The most bytes of an expression an error message quotes.
pub const QUOTED_BYTES: usize = 240;

/// `x` as text, cut after [`QUOTED_BYTES`] (`...` marks the cut): an
/// expression quoted in an error stays short however large it is, and
/// printing stops at the cut, so quoting a huge (or widely shared)
/// expression costs no more than a short one.
pub fn abbreviated(x: &impl Display) -> String {
    struct Bounded {
        out: String,
        cut: bool,
    }
    impl Write for Bounded {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let room = QUOTED_BYTES - self.out.len();
            if s.len() <= room {
                self.out.push_str(s);
                return Ok(());
            }
            let mut end = room;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            self.out.push_str(&s[..end]);
            self.cut = true;
            Err(fmt::Error)
        }
    }
    let mut b = Bounded { out: String::new(), cut: false };
    let _ = write!(b, "{x}");
    if b.cut {
        b.out.push_str("...");
    }
    b.out
}

fn cmp_symbol(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

fn write_args(f: &mut Formatter<'_>, args: &[Expr]) -> fmt::Result {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{a}")?;
    }
    Ok(())
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.node() {
            ExprNode::IntImm { value, ty } => {
                if ty.scalar == ScalarType::I32 {
                    write!(f, "{value}")
                } else {
                    write!(f, "{}({value})", ty.scalar)
                }
            }
            ExprNode::UIntImm { value, ty } => match ty.scalar {
                ScalarType::Bool => write!(f, "{}", *value != 0),
                s => write!(f, "{s}({value})"),
            },
            ExprNode::FloatImm { value, ty } => {
                if ty.scalar == ScalarType::F32 {
                    write!(f, "{value:?}f")
                } else {
                    write!(f, "{value:?}")
                }
            }
            ExprNode::Var { name, .. } | ExprNode::Param { name, .. } => f.write_str(name),
            ExprNode::RVar { rdom, dim } => f.write_str(&rdom.dims[*dim].name),
            ExprNode::Cast { ty, value } => write!(f, "{ty}({value})"),
            ExprNode::Reinterpret { ty, value } => write!(f, "reinterpret<{ty}>({value})"),
            ExprNode::Binary { op, a, b } => match op.symbol() {
                Some(sym) => write!(f, "({a} {sym} {b})"),
                None => write!(f, "{}({a}, {b})", if *op == BinOp::Min { "min" } else { "max" }),
            },
            ExprNode::Cmp { op, a, b } => write!(f, "({a} {} {b})", cmp_symbol(*op)),
            ExprNode::And { a, b } => write!(f, "({a} && {b})"),
            ExprNode::Or { a, b } => write!(f, "({a} || {b})"),
            ExprNode::Not { a } => write!(f, "!{a}"),
            ExprNode::Select { cond, t, f: fv } => write!(f, "select({cond}, {t}, {fv})"),
            ExprNode::Let { name, value, body } => write!(f, "(let {name} = {value} in {body})"),
            ExprNode::Call { target, args, .. } => {
                match target {
                    CallTarget::Func(r) | CallTarget::Input(r) => f.write_str(&r.name)?,
                    CallTarget::Math(m) => f.write_str(m.name())?,
                }
                f.write_char('(')?;
                write_args(f, args)?;
                f.write_char(')')?;
                match target {
                    CallTarget::Func(r) if r.value_index > 0 => write!(f, "[{}]", r.value_index),
                    _ => Ok(()),
                }
            }
            ExprNode::Load { buffer, index, .. } => write!(f, "{buffer}[{index}]"),
            ExprNode::Ramp { base, stride, lanes } => write!(f, "ramp({base}, {stride}, {lanes})"),
            ExprNode::Broadcast { value, lanes } => write!(f, "x{lanes}({value})"),
        }
    }
}

struct Indented<'a> {
    stmt: &'a Stmt,
    depth: usize,
}

impl<'a> Display for Indented<'a> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let pad = "  ".repeat(self.depth);
        let inner = |s: &'a Stmt| Indented { stmt: s, depth: self.depth + 1 };
        let same = |s: &'a Stmt| Indented { stmt: s, depth: self.depth };
        match self.stmt.node() {
            StmtNode::For { name, min, extent, kind, body } => {
                writeln!(f, "{pad}for {name} in [{min}, {min} + {extent}) {} {{", kind.name())?;
                write!(f, "{}", inner(body))?;
                writeln!(f, "{pad}}}")
            }
            StmtNode::LetStmt { name, value, body } => {
                writeln!(f, "{pad}let {name} = {value}")?;
                write!(f, "{}", same(body))
            }
            StmtNode::Block { stmts } => stmts.iter().try_for_each(|s| write!(f, "{}", same(s))),
            StmtNode::IfThenElse { cond, then_case, else_case } => {
                writeln!(f, "{pad}if {cond} {{")?;
                write!(f, "{}", inner(then_case))?;
                if let Some(e) = else_case {
                    writeln!(f, "{pad}}} else {{")?;
                    write!(f, "{}", inner(e))?;
                }
                writeln!(f, "{pad}}}")
            }
            StmtNode::Assert { cond, message } => writeln!(f, "{pad}assert {cond}, {message:?}"),
            StmtNode::ProducerConsumer { func, produce, consume } => {
                writeln!(f, "{pad}produce {func} {{")?;
                write!(f, "{}", inner(produce))?;
                writeln!(f, "{pad}}}")?;
                writeln!(f, "{pad}consume {func} {{")?;
                write!(f, "{}", inner(consume))?;
                writeln!(f, "{pad}}}")
            }
            StmtNode::Realize { func, types, bounds, body } => {
                let types: Vec<String> = types.iter().map(|t| t.to_string()).collect();
                write!(f, "{pad}realize {func}: {}", types.join(" x "))?;
                for r in bounds {
                    write!(f, "[{}, {}]", r.min, r.extent)?;
                }
                writeln!(f, " {{")?;
                write!(f, "{}", inner(body))?;
                writeln!(f, "{pad}}}")
            }
            StmtNode::Provide { func, args, values } => {
                write!(f, "{pad}{func}(")?;
                write_args(f, args)?;
                match values.as_slice() {
                    [value] => writeln!(f, ") = {value}"),
                    _ => {
                        f.write_str(") = (")?;
                        write_args(f, values)?;
                        writeln!(f, ")")
                    }
                }
            }
            StmtNode::Allocate { buffer, ty, size, body } => {
                writeln!(f, "{pad}allocate {buffer}: {ty}[{size}] {{")?;
                write!(f, "{}", inner(body))?;
                writeln!(f, "{pad}}}")
            }
            StmtNode::Store { buffer, index, value } => writeln!(f, "{pad}{buffer}[{index}] = {value}"),
            StmtNode::NoOp => writeln!(f, "{pad}no_op"),
        }
    }
}

impl Display for Stmt {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Indented { stmt: self, depth: 0 })
    }
}
