//! `coopmat coopvec-convert` end to end: a 2-D `.npy` (C and Fortran order) through the
//! engine's optimal layout and back, the size query, and its errors.

use std::path::Path;
use std::process::Command;

fn coopmat(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_coopmat"))
        .arg("coopvec-convert")
        .args(args)
        .output()
        .expect("runs coopmat");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn npy(path: &Path, rows: u64, cols: u64, data: &[f32], fortran: bool) {
    use npyz::WriterBuilder;
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&[rows, cols])
        .order(if fortran {
            npyz::Order::Fortran
        } else {
            npyz::Order::C
        })
        .writer(std::fs::File::create(path).unwrap())
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

#[test]
fn npy_matrices_round_trip_through_the_optimal_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols) = (12usize, 20usize);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32 / 8.0 - 10.0).collect();
    let mut fortran = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            fortran[c * rows + r] = a[r * cols + c];
        }
    }
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    npy(Path::new(&p("c.npy")), rows as u64, cols as u64, &a, false);
    npy(
        Path::new(&p("f.npy")),
        rows as u64,
        cols as u64,
        &fortran,
        true,
    );
    let raw: Vec<u8> = a.iter().flat_map(|x| x.to_le_bytes()).collect();
    for layout in ["inferencing-optimal", "training-optimal"] {
        let (code, size) = coopmat(&[
            &p("c.npy"),
            "--size",
            "--dst-type",
            "float16",
            "--dst-layout",
            layout,
        ]);
        assert_eq!(code, 0, "{size}");
        // 12 rows: one tile of 16 rows; 20 f16 columns: two tiles of 16. 2 tiles of 512 bytes.
        assert_eq!(size.trim(), "1024");
        for src in ["c.npy", "f.npy"] {
            let (code, text) = coopmat(&[
                &p(src),
                "-o",
                &p("opt"),
                "--dst-type",
                "float16",
                "--dst-layout",
                layout,
            ]);
            assert_eq!(code, 0, "{text}");
            assert_eq!(std::fs::metadata(p("opt")).unwrap().len(), 1024);
            let (code, text) = coopmat(&[
                &p("opt"),
                "--rows",
                "12",
                "--cols",
                "20",
                "--src-type",
                "float16",
                "--src-layout",
                layout,
                "-o",
                &p("back"),
                "--dst-type",
                "float32",
                "--dst-layout",
                "row-major",
            ]);
            assert_eq!(code, 0, "{text}");
            // Multiples of 1/8 below 20: exact in f16.
            assert_eq!(std::fs::read(p("back")).unwrap(), raw, "{src} via {layout}");
        }
    }
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let out = out.to_str().unwrap();
    let input = dir.path().join("in.bin");
    std::fs::write(&input, [0u8; 64]).unwrap();
    let input = input.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "--size",
                "--rows",
                "4",
                "--dst-type",
                "float16",
                "--dst-layout",
                "row-major",
            ],
            "--cols is needed",
        ),
        (
            &[
                input,
                "--rows",
                "4",
                "--cols",
                "4",
                "--src-type",
                "float32",
                "-o",
                out,
                "--dst-type",
                "sint8-packed",
                "--dst-layout",
                "row-major",
            ],
            "packed types are input interpretations only",
        ),
        (
            &[
                input,
                "--rows",
                "8",
                "--cols",
                "4",
                "--src-type",
                "float32",
                "-o",
                out,
                "--dst-type",
                "float16",
                "--dst-layout",
                "row-major",
            ],
            "source has 64 bytes; its shape needs 128",
        ),
        (
            &[
                "--size",
                "--rows",
                "4000000000",
                "--cols",
                "4000000000",
                "--dst-type",
                "float64",
                "--dst-layout",
                "row-major",
                "--dst-stride",
                "18446744073709551615",
            ],
            "exceeds 2^64 bytes",
        ),
        (
            &[
                input,
                "--rows",
                "2",
                "--cols",
                "4",
                "--src-type",
                "float32",
                "--src-stride",
                "8",
                "-o",
                out,
                "--dst-type",
                "float16",
                "--dst-layout",
                "row-major",
            ],
            "source stride 8 is smaller than one row (16 bytes)",
        ),
    ];
    for (args, want) in cases {
        let (code, text) = coopmat(args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(want), "{args:?}: {text}");
    }
    let (code, text) = coopmat(&[
        input,
        "--rows",
        "1",
        "--cols",
        "1",
        "--src-type",
        "bogus",
        "-o",
        out,
        "--dst-type",
        "float16",
        "--dst-layout",
        "row-major",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("unknown component type \"bogus\""), "{text}");
}
