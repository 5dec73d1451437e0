//! Replays the cooperative-vector cases that `crates/exec/tests/coopvec.rs` writes (with
//! `COOPMAT_COOPVEC_CASES=DIR`) on the Vulkan GPU and compares them with the exact values and
//! with the engine. Usage: `coopvec_cases DIR` (a case, or a folder of cases; with
//! `COOPVEC_CASES_NO_HEADER` set, rows only). Matrices the case
//! stores in an optimal layout are converted with the driver (vkConvertCooperativeVectorMatrixNV),
//! and an optimal-layout output matrix is converted back to row-major f32 the same way.
//!
//! Prints one markdown row per case: checks, the largest error relative to Σ|terms|
//! (in units of 2^-11, an f16 rounding) and in units in the last place of the result type,
//! how many values are outside the engine's bound, how many are bit-identical with the engine.

use coopmat_gpu::Gpu;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The value of `bytes` at `off` as component type `ty` (VkComponentTypeKHR).
fn value(bytes: &[u8], off: usize, ty: u32) -> f64 {
    let b = |n: usize| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&bytes[off..off + n]);
        u64::from_le_bytes(w)
    };
    match ty {
        0 => half::f16::from_bits(b(2) as u16).to_f64(),
        1 => f32::from_bits(b(4) as u32) as f64,
        5 => b(4) as u32 as i32 as f64,
        9 => b(4) as u32 as f64,
        t => panic!("no values of component type {t}"),
    }
}

fn bytes_of(ty: u32) -> usize {
    match ty {
        0 => 2,
        _ => 4,
    }
}

/// Bytes of a stored matrix element of component type `ty`.
fn elem_bytes(ty: u32) -> usize {
    coopmat_exec::coopvec::ComponentType::from_raw(ty).map_or(1, |t| t.bytes() as usize)
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: coopvec_cases DIR");
    let gpu = Gpu::open().unwrap_or_else(|e| panic!("{e}"));
    if std::env::var_os("COOPVEC_CASES_NO_HEADER").is_none() {
        println!("device: {}\n", gpu.name());
        println!(
            "| case | checks | max error / Σ|terms| (units of 2^-11) | max error (result ulps) | outside the engine's bound | bit-identical with the engine | GPU ms |"
        );
        println!("|---|---|---|---|---|---|---|");
    }
    // DIR is one case, or a folder of cases.
    let mut names: Vec<_> = if Path::new(&dir).join("case.json").exists() {
        vec![Path::new(&dir).to_path_buf()]
    } else {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("case.json").exists())
            .collect()
    };
    names.sort();
    for case in names {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        match replay(&gpu, &case) {
            Ok(row) => println!("| {name} | {row} |"),
            Err(e) => println!("| {name} | {e} | | | | | |"),
        }
    }
}

fn seg(v: &Value) -> (usize, u32, u32, u32, u32, String) {
    (
        v["offset"].as_u64().unwrap() as usize,
        v["rows"].as_u64().unwrap() as u32,
        v["cols"].as_u64().unwrap() as u32,
        v["type"].as_u64().unwrap() as u32,
        v["layout"].as_u64().unwrap() as u32,
        v["src"].as_str().unwrap().to_string(),
    )
}

fn binding(v: &Value) -> (u32, u32) {
    (v[0].as_u64().unwrap() as u32, v[1].as_u64().unwrap() as u32)
}

fn replay(gpu: &Gpu, case: &Path) -> Result<String, String> {
    let j: Value = serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap())
        .map_err(|e| e.to_string())?;
    // A product outside the device's combinations is not run: its result is undefined.
    if let Some(c) = j["combination"].as_array() {
        let c: Vec<u32> = c.iter().map(|v| v.as_u64().unwrap_or(0) as u32).collect();
        let supported = gpu
            .cooperative_vector_properties()
            .map_err(|e| e.to_string())?;
        let ok = supported.iter().any(|s| {
            s.input_type == c[0]
                && s.input_interpretation == c[1]
                && s.matrix_interpretation == c[2]
                && (c[3] == u32::MAX || s.bias_interpretation == c[3])
                && s.result_type == c[4]
                && (c[5] == 0 || s.transpose)
        });
        if !ok {
            return Err("not a combination the device lists: skipped".into());
        }
    }
    let limits = gpu.cooperative_vector_limits();
    if let Some(acc) = j["training_accumulation"].as_u64()
        && !(limits.training
            && if acc == 0 {
                limits.training_f16_accumulation
            } else {
                limits.training_f32_accumulation
            })
    {
        return Err(format!(
            "the device lacks training with {} accumulation: skipped",
            if acc == 0 { "f16" } else { "f32" }
        ));
    }
    let read = |f: &str| std::fs::read(case.join(f)).unwrap();
    let mut buffers: BTreeMap<(u32, u32), Vec<u8>> = BTreeMap::new();
    for (k, f) in j["buffers"].as_object().unwrap() {
        let (s, b) = k.split_once(':').unwrap();
        buffers.insert(
            (s.parse().unwrap(), b.parse().unwrap()),
            read(f.as_str().unwrap()),
        );
    }
    // Matrices in optimal layouts: the driver's layout at the same offset, the rest of the
    // room the case reserved zeroed.
    let segs: Vec<&Value> = j["segments"].as_array().unwrap().iter().collect();
    for s in &segs {
        let (off, rows, cols, ty, layout, src) = seg(s);
        let key = binding(&s["binding"]);
        // Vulkan's row-major stride is explicit (0 is not "tight").
        let stride = cols as usize * elem_bytes(ty);
        let data = gpu
            .convert_matrix(rows, cols, (ty, 0, stride), &read(&src), (ty, layout, 0))
            .map_err(|e| e.to_string())?;
        let buf = buffers.get_mut(&key).unwrap();
        let room = s["room"].as_u64().unwrap() as usize;
        if data.len() > room {
            return Err(format!(
                "the driver's layout takes {} bytes; the case has room for {room}",
                data.len()
            ));
        }
        buf[off..off + room].fill(0);
        buf[off..off + data.len()].copy_from_slice(&data);
    }
    let groups: Vec<u32> = j["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_u64().unwrap() as u32)
        .collect();
    let module = read("shader.spv");
    let spec = BTreeMap::new();
    let d = coopmat_gpu::Dispatch {
        module: &module,
        entry: "main",
        spec: &spec,
        push: &[],
        groups: [groups[0], groups[1], groups[2]],
        repeat: 1,
        subgroup_size: None,
        addresses: &[],
    };
    let t = gpu
        .dispatch(&d, &mut buffers)
        .map_err(|e| e.to_string())?
        .wall;
    let (mut n, mut worst, mut outside, mut same) = (0usize, 0f64, 0usize, 0usize);
    let mut worst_at = String::new();
    let mut worst_ulps = 0f64;
    for o in j["outputs"].as_array().unwrap() {
        let key = binding(&o["binding"]);
        let mut got = buffers[&key].clone();
        let mut engine = read(o["engine"].as_str().unwrap());
        if let Some(m) = o["matrix"].as_object() {
            let m = Value::Object(m.clone());
            let (off, rows, cols, ty, layout, _) = seg(&m);
            got = gpu
                .convert_matrix(
                    rows,
                    cols,
                    (ty, layout, 0),
                    &got[off..],
                    (1, 0, cols as usize * 4),
                )
                .map_err(|e| e.to_string())?;
            // The engine's bytes are in the engine's layout: the engine's converter reads them.
            let side = |l| coopmat_exec::coopvec::MatrixSide {
                ty: coopmat_exec::coopvec::ComponentType::from_raw(ty).unwrap(),
                layout: coopmat_exec::coopvec::MatrixLayout::from_raw(l).unwrap(),
                stride: 0,
            };
            let mut e = vec![0u8; rows as usize * cols as usize * 4];
            let rm = coopmat_exec::coopvec::MatrixSide {
                ty: coopmat_exec::coopvec::ComponentType::F32,
                layout: coopmat_exec::coopvec::MatrixLayout::RowMajor,
                stride: 0,
            };
            coopmat_exec::coopvec::convert_matrix(
                rows,
                cols,
                side(layout),
                &engine[off..],
                rm,
                &mut e,
            )
            .map_err(|e| e.to_string())?;
            engine = e;
        }
        for c in o["checks"].as_array().unwrap() {
            let c = c.as_array().unwrap();
            let (off, ty) = (
                c[0].as_u64().unwrap() as usize,
                c[1].as_u64().unwrap() as u32,
            );
            let (exact, mag, bound) = (
                c[2].as_f64().unwrap(),
                c[3].as_f64().unwrap(),
                c[4].as_f64().unwrap(),
            );
            let v = value(&got, off, ty);
            let err = (v - exact).abs();
            n += 1;
            // The spacing of the result type at the exact value.
            let ulp = match ty {
                0 => 2f64.powi((exact.abs().max(2f64.powi(-14))).log2().floor() as i32 - 10),
                1 => 2f64.powi((exact.abs().max(2f64.powi(-126))).log2().floor() as i32 - 23),
                _ => 1.0,
            };
            worst_ulps = worst_ulps.max(err / ulp);
            let units = if mag > 0.0 {
                err / mag / 2f64.powi(-11)
            } else if err > 0.0 {
                f64::INFINITY
            } else {
                0.0
            };
            if units > worst {
                worst = units;
                worst_at = format!(
                    "byte {off}: exact {exact}, GPU {v}, engine {}, Σ|terms| {mag}",
                    value(&engine, off, ty)
                );
            }
            if err > bound {
                outside += 1;
            }
            let w = bytes_of(ty);
            if got[off..off + w] == engine[off..off + w] {
                same += 1;
            }
        }
    }
    if std::env::var_os("COOPVEC_CASES_VERBOSE").is_some() && !worst_at.is_empty() {
        eprintln!("{}: worst at {worst_at}", case.display());
    }
    Ok(format!(
        "{n} | {worst:.3} | {worst_ulps:.2} | {outside} | {same} ({:.1} %) | {:.3}",
        100.0 * same as f64 / n.max(1) as f64,
        t.as_secs_f64() * 1e3
    ))
}
