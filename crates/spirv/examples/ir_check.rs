//! Parses every module in a directory into the IR and writes it back, reporting mismatches.
fn main() {
    let dir = std::env::args().nth(1).expect("usage: ir_check DIR");
    let (mut ok, mut total) = (0, 0);
    let t = std::time::Instant::now();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        total += 1;
        match coopmat_spirv::Module::from_bytes(&bytes) {
            Ok(m) => {
                if m.to_bytes(m.endian) == bytes && m.diagnostics.is_empty() {
                    ok += 1
                } else {
                    println!(
                        "{}: mismatch or diags {:?}",
                        p.display(),
                        m.diagnostics.first()
                    )
                }
            }
            Err(e) => println!("{}: {e}", p.display()),
        }
    }
    println!("{ok}/{total} identical in {:?}", t.elapsed());
}
