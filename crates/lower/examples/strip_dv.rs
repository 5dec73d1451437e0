//! Strips decode_vector from one module: `strip_dv IN OUT`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut m = coopmat_spirv::Module::from_bytes(&std::fs::read(&a[1]).unwrap()).unwrap();
    let r = coopmat_lower::strip_decode_vector(&mut m).unwrap();
    std::fs::write(&a[2], m.to_bytes(m.endian)).unwrap();
    println!("{r:?}");
}
