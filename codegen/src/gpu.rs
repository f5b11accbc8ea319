//! GPU code generation: the kernels of a GPU-lowered pipeline
//! ([`compiler::lower::lower_gpu`]) become PTX for one architecture
//! through LLVM's NVPTX back end, with a launch plan for each kernel (its
//! grid and block, shared memory, arguments): a
//! [`compiler::exec::kernels::GpuModule`], plain data, so that kernels
//! compiled where LLVM is run on a GPU host that has none.
//!
//! Transcendental math links NVIDIA's libdevice (`HL_LIBDEVICE`, or
//! `$HL_CUDA_TOOLS/nvvm/libdevice/libdevice.10.bc` as
//! `scripts/cuda-tools.sh` installs it). [`ptxas`] assembles PTX with
//! NVIDIA's assembler where one is installed: the check that the PTX is
//! what a driver accepts, without a GPU.

use crate::emit::emit_kernel;
use crate::CodegenError;
use compiler::exec::kernels::{GpuModule, KernelLaunch, KernelSignature};
use compiler::ir::expr::{Expr, ExprNode, Name};
use compiler::ir::stmt::{ForKind, Stmt, StmtNode};
use compiler::ir::types::Type;
use compiler::ir::visit::{names_bound, walk_expr, walk_stmt, Visitor};
use compiler::lower::GpuLowered;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetTriple};
use inkwell::OptimizationLevel;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The PTX ISA version the kernels declare: 7.8 (CUDA 11.8 and later
/// drivers), the first with sm_90.
const PTX_FEATURES: &str = "+ptx78";

/// Compiles the kernels of `l` to PTX for `l.target`.
pub fn compile_gpu(l: &GpuLowered) -> Result<GpuModule, CodegenError> {
    Target::initialize_nvptx(&InitializationConfig::default());
    let triple = TargetTriple::create("nvptx64-nvidia-cuda");
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    let machine = target
        .create_target_machine(
            &triple,
            &l.target.arch(),
            PTX_FEATURES,
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| CodegenError::Llvm(format!("no NVPTX target machine for {}", l.target.arch())))?;
    let context = Context::create();
    let module = context.create_module("kernels");
    module.set_triple(&triple);
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let statements = kernel_statements(&l.lowered.stmt);
    let mut kernels = vec![];
    for (i, k) in l.kernels.iter().enumerate() {
        let stmt =
            statements.get(&k.name).ok_or_else(|| CodegenError::Unsupported(format!("kernel {} is not in the statement", k.name)))?;
        let entry = format!("kernel{i}_{}", sanitize(&k.name));
        let signature = signature_of(stmt)?;
        let asserts = emit_kernel(&context, &module, &entry, k, stmt, &signature)?;
        annotate_kernel(&context, &module, &entry)?;
        kernels.push(KernelLaunch { entry, kernel: k.clone(), signature, asserts });
    }
    link_libdevice(&context, &module)?;
    module.verify().map_err(|e| CodegenError::Llvm(format!("invalid kernel module: {e}\n{}", module.print_to_string())))?;
    module.run_passes("default<O3>", &machine, PassBuilderOptions::create()).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    let ptx = machine.write_to_memory_buffer(&module, FileType::Assembly).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    let ptx = String::from_utf8_lossy(ptx.as_slice()).trim_end_matches('\0').to_string();
    Ok(GpuModule { target: l.target, ptx, kernels })
}

/// Each kernel's statement (its outermost block loop), by name.
fn kernel_statements(s: &Stmt) -> BTreeMap<Name, Stmt> {
    struct Find(BTreeMap<Name, Stmt>);
    impl Visitor for Find {
        fn visit_expr(&mut self, _: &Expr) {}
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::For { name, kind: ForKind::GpuBlock, .. } => {
                    self.0.insert(name.clone(), s.clone());
                }
                _ => walk_stmt(self, s),
            }
        }
    }
    let mut f = Find(BTreeMap::new());
    f.visit_stmt(s);
    f.0
}

/// What a kernel's statement takes from the host: the buffers it reads or
/// writes but does not allocate, and the variables it uses but does not
/// bind (sorted by name, for a deterministic signature).
fn signature_of(s: &Stmt) -> Result<KernelSignature, CodegenError> {
    #[derive(Default)]
    struct Uses {
        vars: BTreeMap<Name, Type>,
        buffers: BTreeMap<Name, Type>,
        allocated: Vec<Name>,
    }
    impl Visitor for Uses {
        fn visit_expr(&mut self, e: &Expr) {
            match e.node() {
                ExprNode::Var { name, ty } => {
                    self.vars.insert(name.clone(), *ty);
                }
                ExprNode::Load { buffer, ty, .. } if !self.allocated.contains(buffer) => {
                    self.buffers.insert(buffer.clone(), *ty);
                }
                _ => {}
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            match s.node() {
                StmtNode::Store { buffer, value, .. } if !self.allocated.contains(buffer) => {
                    self.buffers.insert(buffer.clone(), value.ty());
                }
                StmtNode::Allocate { buffer, .. } => {
                    self.allocated.push(buffer.clone());
                    walk_stmt(self, s);
                    self.allocated.pop();
                    return;
                }
                _ => {}
            }
            walk_stmt(self, s)
        }
    }
    let mut u = Uses::default();
    u.visit_stmt(s);
    let bound = names_bound(s);
    let scalars = u.vars.into_iter().filter(|(n, _)| !bound.contains(n)).map(|(n, t)| (n, t.with_lanes(1))).collect();
    let buffers = u.buffers.into_iter().map(|(n, t)| (n, t.scalar)).collect();
    Ok(KernelSignature { buffers, scalars })
}

/// Marks `entry` as a kernel for NVPTX (`!nvvm.annotations`).
fn annotate_kernel<'ctx>(context: &'ctx Context, module: &Module<'ctx>, entry: &str) -> Result<(), CodegenError> {
    let f = module.get_function(entry).ok_or_else(|| CodegenError::Llvm(format!("no function {entry}")))?;
    let node = context.metadata_node(&[
        f.as_global_value().as_pointer_value().into(),
        context.metadata_string("kernel").into(),
        context.i32_type().const_int(1, false).into(),
    ]);
    module.add_global_metadata("nvvm.annotations", &node).map_err(|e| CodegenError::Llvm(e.to_string()))
}

/// Where libdevice is: `HL_LIBDEVICE`, or under `HL_CUDA_TOOLS`.
pub fn libdevice_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HL_LIBDEVICE") {
        return Some(PathBuf::from(p));
    }
    let p = PathBuf::from(std::env::var_os("HL_CUDA_TOOLS")?).join("nvvm/libdevice/libdevice.10.bc");
    p.exists().then_some(p)
}

/// Links libdevice into `module` when a kernel calls it; its functions
/// become internal, so that optimization drops the unused ones.
fn link_libdevice<'ctx>(context: &'ctx Context, module: &Module<'ctx>) -> Result<(), CodegenError> {
    let calls: Vec<String> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("__nv_"))
        .collect();
    if calls.is_empty() {
        return Ok(());
    }
    let path = libdevice_path().ok_or_else(|| {
        CodegenError::Llvm(format!(
            "the kernels call {} from libdevice, which is not installed (run scripts/cuda-tools.sh, or set HL_LIBDEVICE)",
            calls.join(", ")
        ))
    })?;
    let libdevice = Module::parse_bitcode_from_path(&path, context).map_err(|e| CodegenError::Llvm(format!("{}: {e}", path.display())))?;
    libdevice.set_triple(&module.get_triple());
    libdevice.set_data_layout(&module.get_data_layout());
    module.link_in_module(libdevice).map_err(|e| CodegenError::Llvm(format!("linking libdevice: {e}")))?;
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        if f.get_name().to_string_lossy().starts_with("__nv") {
            f.set_linkage(Linkage::Internal);
        }
    }
    Ok(())
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// What `ptxas` said of a PTX module: per kernel, registers and spills.
#[derive(Clone, Debug, PartialEq)]
pub struct PtxasReport {
    /// `ptxas -v`'s report, as printed.
    pub info: String,
}

impl PtxasReport {
    /// The most registers any kernel uses.
    pub fn max_registers(&self) -> Option<u32> {
        self.info.lines().filter_map(|l| l.split("Used ").nth(1)?.split(' ').next()?.parse().ok()).max()
    }

    /// Whether any kernel spills registers to local memory.
    pub fn spills(&self) -> bool {
        self.info.lines().any(|l| l.contains("spill") && !l.contains("0 bytes spill stores, 0 bytes spill loads"))
    }
}

/// Where `ptxas` is: `HL_PTXAS`, under `HL_CUDA_TOOLS`, or on the `PATH`.
pub fn ptxas_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HL_PTXAS") {
        return Some(PathBuf::from(p));
    }
    if let Some(dir) = std::env::var_os("HL_CUDA_TOOLS") {
        let p = PathBuf::from(dir).join("bin/ptxas");
        if p.exists() {
            return Some(p);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("ptxas")).find(|p| p.exists())
}

/// Assembles `ptx` for `arch` (`sm_90`) with the `ptxas` at `ptxas`;
/// the error is what `ptxas` printed.
pub fn ptxas(ptxas: &Path, ptx: &str, arch: &str) -> Result<PtxasReport, String> {
    let dir = std::env::temp_dir().join(format!("hl-ptxas-{}-{}", std::process::id(), unique()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join("kernels.ptx");
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg("-o")
        .arg(dir.join("kernels.cubin"))
        .arg(&file)
        .output()
        .map_err(|e| format!("{}: {e}", ptxas.display()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = out?;
    let info = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if out.status.success() {
        Ok(PtxasReport { info })
    } else {
        Err(info)
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
