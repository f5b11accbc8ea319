//! Puts libtorch's library folder on the run path of every binary, test
//! and example of the crates that link libtorch (this one, and the
//! benchmark agent, whose manifest names this file as its build script), so they load libtorch without
//! `LD_LIBRARY_PATH` (torch-sys links it but records no run path).

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    if let Ok(libtorch) = std::env::var("LIBTORCH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{libtorch}/lib");
    }
}
