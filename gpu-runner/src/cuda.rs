//! A device that is an NVIDIA GPU, through the CUDA driver API
//! (`cudarc`, the driver library found at run time: nothing here needs
//! CUDA to build). The PTX is loaded once; a buffer goes to the device the
//! first time a kernel takes it and stays there (kernels write only device
//! copies; host code never writes a buffer), and the pipeline's buffers
//! come back once, at the end. Each launch is timed with CUDA events and
//! checked: a failed assertion (the kernel's error word), an illegal
//! address, a time-out or any other failure is named, never a crash of
//! the caller (which should still run this in a child process with a time
//! limit: a fault leaves the CUDA context unusable).

use crate::launch::evaluate;
use crate::program::{Device, RunError, Timings};
use compiler::exec::buffer::Buffer;
use compiler::exec::interpret::InterpretError;
use compiler::exec::kernels::{GpuModule, KernelHost, KernelLauncher};
use compiler::ir::stmt::{Stmt, StmtNode};
use compiler::ir::value::Scalar;
use compiler::ScalarType;
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DriverError, LaunchConfig, PushKernelArg};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A GPU with a program's kernels loaded.
pub struct CudaDevice {
    stream: Arc<CudaStream>,
    module: GpuModule,
    functions: HashMap<String, CudaFunction>,
    /// Device copies, by the host buffer's name and data address.
    resident: HashMap<(String, usize), CudaSlice<u8>>,
    timings: Timings,
    error: Option<RunError>,
}

/// The name and compute capability of GPU 0, or why there is none.
pub fn describe_device() -> Result<(String, u32), RunError> {
    let context = open()?;
    let name = context.name().map_err(|e| RunError::NoDevice(e.to_string()))?;
    Ok((name, capability(&context)?))
}

fn open() -> Result<Arc<CudaContext>, RunError> {
    // SAFETY: only tries to open the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(RunError::NoDevice("the CUDA driver library (libcuda) is not installed".into()));
    }
    CudaContext::new(0).map_err(|e| RunError::NoDevice(format!("no CUDA device 0: {e}")))
}

fn capability(context: &CudaContext) -> Result<u32, RunError> {
    let attr = |a| context.attribute(a).map_err(|e| RunError::NoDevice(e.to_string()));
    let major = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok((major * 10 + minor) as u32)
}

impl CudaDevice {
    /// GPU 0 with `module`'s PTX loaded; an error when there is no GPU,
    /// or one older than the module's architecture.
    pub fn open(module: &GpuModule) -> Result<CudaDevice, RunError> {
        let context = open()?;
        let sm = capability(&context)?;
        if sm < module.target.sm {
            return Err(RunError::NoDevice(format!("the GPU is sm_{sm}; the kernels are for {}", module.target.arch())));
        }
        let loaded = context.load_module(cudarc::nvrtc::Ptx::from_src(module.ptx.clone())).map_err(|e| RunError::Load(e.to_string()))?;
        let mut functions = HashMap::new();
        for k in &module.kernels {
            let f = loaded.load_function(&k.entry).map_err(|e| RunError::Load(format!("{}: {e}", k.entry)))?;
            functions.insert(k.entry.clone(), f);
        }
        let stream = context.default_stream();
        Ok(CudaDevice { stream, module: module.clone(), functions, resident: HashMap::new(), timings: Timings::default(), error: None })
    }

    /// The device copy of host buffer `b`, copied there if it is not yet.
    fn resident(&mut self, b: &Buffer) -> Result<&mut CudaSlice<u8>, DriverError> {
        let key = (b.name.clone(), b.bytes().as_ptr() as usize);
        if !self.resident.contains_key(&key) {
            // A zero-length buffer still needs an address.
            let bytes = if b.bytes().is_empty() { vec![0u8; 1] } else { b.bytes().to_vec() };
            let slice = self.stream.clone_htod(&bytes)?;
            self.timings.copied_bytes += bytes.len() as u64;
            self.resident.insert(key.clone(), slice);
        }
        Ok(self.resident.get_mut(&key).expect("inserted above"))
    }

    fn run_kernel(&mut self, kernel: &Stmt, host: &mut dyn KernelHost) -> Result<(), RunError> {
        let StmtNode::For { name, .. } = kernel.node() else {
            return Err(InterpretError::NotLowered { node: "a kernel that is not a block loop".into() }.into());
        };
        let plan = self
            .module
            .kernel(name)
            .cloned()
            .ok_or_else(|| InterpretError::NotLowered { node: format!("kernel {name} without a launch plan") })?;
        let args = evaluate(&plan, host)?;
        self.timings.launches += 1;
        if args.is_empty() {
            return Ok(());
        }
        let driver = |e: DriverError| classify(&plan.entry, e);
        // Device copies of the buffers, in the signature's order.
        let mut buffers = vec![];
        for (b, _) in &plan.signature.buffers {
            let host_buffer = host.host_buffer(b)?;
            let key = (host_buffer.name.clone(), host_buffer.bytes().as_ptr() as usize);
            self.resident(host_buffer).map_err(driver)?;
            buffers.push(key);
        }
        let scalars: Vec<ScalarArg> =
            plan.signature.scalars.iter().zip(&args.scalars).map(|((_, t), v)| ScalarArg::of(*v, t.scalar)).collect();
        let error = self.stream.alloc_zeros::<i32>(1).map_err(driver)?;
        let function = self.functions.get(&plan.entry).expect("loaded at open");
        let mut launch = self.stream.launch_builder(function);
        let slices: Vec<&CudaSlice<u8>> = buffers.iter().map(|k| &self.resident[k]).collect();
        for s in &slices {
            launch.arg(*s);
        }
        for s in &scalars {
            s.push(&mut launch);
        }
        launch.arg(&error);
        launch.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
        let config = LaunchConfig {
            grid_dim: (args.grid[0], args.grid[1], args.grid[2]),
            block_dim: (args.block[0], args.block[1], args.block[2]),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments are the kernel's signature, in order, with
        // the types its PTX declares; the buffers are device copies at
        // least as large as the host's, which the host code checked.
        let events = unsafe { launch.launch(config) }.map_err(driver)?;
        self.stream.synchronize().map_err(driver)?;
        if let Some((start, end)) = events {
            self.timings.kernel_seconds += f64::from(start.elapsed_ms(&end).map_err(driver)?) / 1e3;
        }
        let code = self.stream.clone_dtoh(&error).map_err(driver)?[0];
        if code != 0 {
            let message = plan.asserts.get(code as usize - 1).cloned().unwrap_or_else(|| format!("error code {code}"));
            return Err(RunError::Assertion { kernel: plan.entry.clone(), message });
        }
        Ok(())
    }
}

/// A failed driver call, by kind.
fn classify(kernel: &str, e: DriverError) -> RunError {
    let detail = e.to_string();
    let kernel = kernel.to_string();
    match e.0 {
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS => RunError::IllegalAddress { kernel, detail },
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => RunError::OutOfMemory(detail),
        CUresult::CUDA_ERROR_LAUNCH_TIMEOUT => RunError::Timeout { kernel, detail },
        _ => RunError::LaunchFailed { kernel, detail },
    }
}

/// A scalar argument in the type the kernel declares.
enum ScalarArg {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl ScalarArg {
    fn of(v: Scalar, t: ScalarType) -> ScalarArg {
        let i = v.as_i128();
        match t {
            ScalarType::Bool => ScalarArg::U8(u8::from(v.as_bool())),
            ScalarType::U8 => ScalarArg::U8(i as u8),
            ScalarType::U16 => ScalarArg::U16(i as u16),
            ScalarType::U32 => ScalarArg::U32(i as u32),
            ScalarType::U64 => ScalarArg::U64(i as u64),
            ScalarType::I8 => ScalarArg::I8(i as i8),
            ScalarType::I16 => ScalarArg::I16(i as i16),
            ScalarType::I32 => ScalarArg::I32(i as i32),
            ScalarType::I64 => ScalarArg::I64(i as i64),
            ScalarType::F32 => ScalarArg::F32(v.as_f64() as f32),
            ScalarType::F64 => ScalarArg::F64(v.as_f64()),
        }
    }

    fn push<'a>(&'a self, launch: &mut cudarc::driver::LaunchArgs<'a>) {
        match self {
            ScalarArg::U8(x) => launch.arg(x),
            ScalarArg::U16(x) => launch.arg(x),
            ScalarArg::U32(x) => launch.arg(x),
            ScalarArg::U64(x) => launch.arg(x),
            ScalarArg::I8(x) => launch.arg(x),
            ScalarArg::I16(x) => launch.arg(x),
            ScalarArg::I32(x) => launch.arg(x),
            ScalarArg::I64(x) => launch.arg(x),
            ScalarArg::F32(x) => launch.arg(x),
            ScalarArg::F64(x) => launch.arg(x),
        };
    }
}

impl KernelLauncher for CudaDevice {
    fn launch(&mut self, kernel: &Stmt, host: &mut dyn KernelHost) -> Result<(), InterpretError> {
        self.run_kernel(kernel, host).map_err(|e| {
            let message = e.to_string();
            self.error = Some(e);
            InterpretError::AssertionFailed { message }
        })
    }
}

impl Device for CudaDevice {
    fn finish(&mut self, buffers: &mut BTreeMap<String, Buffer>) -> Result<Timings, RunError> {
        for b in buffers.values_mut() {
            let key = (b.name.clone(), b.bytes().as_ptr() as usize);
            if let Some(slice) = self.resident.get(&key) {
                let bytes = self.stream.clone_dtoh(slice).map_err(|e| classify("(copy back)", e))?;
                let n = b.bytes().len();
                b.bytes_mut().copy_from_slice(&bytes[..n]);
                self.timings.copied_bytes += n as u64;
            }
        }
        self.resident.clear();
        Ok(std::mem::take(&mut self.timings))
    }

    fn take_error(&mut self) -> Option<RunError> {
        self.error.take()
    }
}
