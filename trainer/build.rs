//! Puts libtorch's library folder on the run path of every binary, test
//! and example of the crates that link libtorch (this one, and `apps` and
//! `benchmark-agent`, whose manifests name this file as their build
//! script), so they load libtorch without `LD_LIBRARY_PATH` (torch-sys links it but records no run path).

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    if let Ok(libtorch) = std::env::var("LIBTORCH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{libtorch}/lib");
    }
}
