//! `coopmat run`: execute a compute shader on the CPU engine.

use anyhow::{Context, Result, anyhow, bail, ensure};
use coopmat_exec::{Pipeline, Resources, SpecConstants};
use std::path::PathBuf;

/// What a dispatch needs, shared by `coopmat run`, `coopmat gpu run` and `coopmat diff`.
#[derive(clap::Args)]
pub struct DispatchArgs {
    /// The SPIR-V binary.
    pub file: PathBuf,
    /// Entry point name (default: the first GLCompute entry point).
    #[arg(long)]
    pub entry: Option<String>,
    /// Workgroup counts X,Y,Z.
    #[arg(long, default_value = "1,1,1")]
    pub groups: String,
    /// Buffer SET:BINDING=SOURCE (SET:BINDING[I]=SOURCE: element I of a descriptor array),
    /// SOURCE one of FILE.npy, raw:FILE, zeros:BYTES, const:BYTES:U32 (repeated word),
    /// random:BYTES:SEED.
    #[arg(long = "buffer")]
    pub buffers: Vec<String>,
    /// Push constants: a file, or hex bytes (e.g. 0x0100000002000000).
    #[arg(long)]
    pub push: Option<String>,
    /// Specialization constant ID=VALUE (integer, 0x hex, or a float with a '.' = f32 bits).
    #[arg(long = "spec")]
    pub spec: Vec<String>,
    /// Write buffer SET:BINDING=FILE.npy[:DTYPE] (DTYPE f16,f32,f64,i8..i64,u8..u64; default f32)
    /// or FILE.bin (raw bytes).
    #[arg(long = "out")]
    pub outs: Vec<String>,
}

impl DispatchArgs {
    /// The buffers the options name, by (set, binding).
    pub fn buffers(&self) -> Result<std::collections::BTreeMap<(u32, u32), Vec<u8>>> {
        self.check_unique_bindings()?;
        let mut out = std::collections::BTreeMap::new();
        for b in &self.buffers {
            let (key, src) = parse_binding(b)?;
            if key.2.is_none() {
                out.insert((key.0, key.1), buffer_source(src)?);
            }
        }
        Ok(out)
    }

    /// Refuses a binding (or array element) given by two `--buffer` options: the later one would
    /// silently replace the earlier.
    fn check_unique_bindings(&self) -> Result<()> {
        let mut seen = std::collections::BTreeSet::new();
        for b in &self.buffers {
            let (key, _) = parse_binding(b)?;
            if !seen.insert(key) {
                let element = key.2.map(|i| format!("[{i}]")).unwrap_or_default();
                bail!(
                    "--buffer {b:?}: binding {}:{}{element} is given twice",
                    key.0,
                    key.1
                );
            }
        }
        Ok(())
    }

    /// The descriptor arrays the options name (`SET:BINDING[I]=SOURCE`), every index from 0
    /// given.
    pub fn buffer_arrays(&self) -> Result<BufferArrays> {
        let mut parts: std::collections::BTreeMap<
            (u32, u32),
            std::collections::BTreeMap<u32, Vec<u8>>,
        > = Default::default();
        for b in &self.buffers {
            let (key, src) = parse_binding(b)?;
            if let Some(i) = key.2 {
                parts
                    .entry((key.0, key.1))
                    .or_default()
                    .insert(i, buffer_source(src)?);
            }
        }
        let mut out = std::collections::BTreeMap::new();
        for (k, elems) in parts {
            if let Some((n, _)) = elems.keys().enumerate().find(|(n, i)| *n as u32 != **i) {
                bail!(
                    "--buffer {}:{}[{n}] is missing (the array's buffers are given from index 0)",
                    k.0,
                    k.1
                );
            }
            out.insert(k, elems.into_values().collect());
        }
        Ok(out)
    }

    /// The push-constant bytes (empty without --push).
    pub fn push_constants(&self) -> Result<Vec<u8>> {
        match &self.push {
            Some(p) => parse_push(p),
            None => Ok(Vec::new()),
        }
    }
}

/// Run a compute shader on the CPU (SIMT engine) and write buffers back out.
#[derive(clap::Args)]
pub struct Args {
    /// The shader, its inputs and outputs.
    #[command(flatten)]
    pub dispatch: DispatchArgs,
    /// Engine options.
    #[command(flatten)]
    pub engine: crate::engine_args::EngineArgs,
}

/// Buffers of descriptor arrays by (set, binding).
pub type BufferArrays = std::collections::BTreeMap<(u32, u32), Vec<Vec<u8>>>;

/// A `--buffer`/`--out` key: set, binding, and the element of a descriptor array.
type BindingKey = (u32, u32, Option<u32>);

/// `SET:BINDING[=...]` or `SET:BINDING[I]=...` (element I of a descriptor array).
fn parse_binding(s: &str) -> Result<(BindingKey, &str)> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("expected SET:BINDING=..., got {s:?}"))?;
    let (a, b) = k
        .split_once(':')
        .ok_or_else(|| anyhow!("expected SET:BINDING, got {k:?}"))?;
    let (b, index) = match b.trim().strip_suffix(']').and_then(|x| x.split_once('[')) {
        Some((b, i)) => (
            b,
            Some(
                i.trim()
                    .parse()
                    .with_context(|| format!("the array index in {k:?}"))?,
            ),
        ),
        None => (b, None),
    };
    Ok((
        (
            a.trim().parse().context("set")?,
            b.trim().parse().context("binding")?,
            index,
        ),
        v,
    ))
}

fn parse_u64(s: &str) -> Result<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x") {
        Ok(u64::from_str_radix(h, 16)?)
    } else if let Some(n) = s.strip_prefix('-') {
        Ok((n.parse::<i64>()?).wrapping_neg() as u64)
    } else {
        Ok(s.parse()?)
    }
}

/// Largest `.npy` header accepted. numpy writes a few hundred bytes; the header is a Python
/// literal that the crate's parser handles recursively, so both its size and its nesting are
/// bounded before the crate sees it.
const NPY_MAX_HEADER: usize = 64 << 10;
/// Deepest bracket nesting accepted in a `.npy` header (a plain array needs 2: `{…(…)…}`).
const NPY_MAX_NESTING: usize = 8;

/// Reads a `.npy` file as the bytes of its array in C (row-major) order, little-endian.
/// The header is checked first (magic, size, nesting), then the data against it: a plain dtype,
/// exactly shape × item size bytes; Fortran-ordered arrays are transposed to C order.
fn read_npy(path: &str) -> Result<Vec<u8>> {
    let bytes = crate::inputs::read_file(path)?;
    npy_to_c_order(&bytes).with_context(|| format!("{path}: not a usable .npy file"))
}

fn npy_to_c_order(bytes: &[u8]) -> Result<Vec<u8>> {
    ensure!(bytes.starts_with(b"\x93NUMPY"), "no .npy magic");
    let (len_bytes, prefix) = match bytes.get(6) {
        Some(1) => (2, 10),
        Some(2 | 3) => (4, 12),
        Some(v) => bail!("unknown .npy version {v}"),
        None => bail!("truncated header"),
    };
    let header_len = bytes
        .get(8..8 + len_bytes)
        .map(|b| b.iter().rev().fold(0usize, |a, &x| (a << 8) | x as usize))
        .ok_or_else(|| anyhow!("truncated header"))?;
    ensure!(
        header_len <= NPY_MAX_HEADER,
        "header of {header_len} bytes (at most {NPY_MAX_HEADER})"
    );
    let header = bytes
        .get(prefix..prefix + header_len)
        .ok_or_else(|| anyhow!("header runs past the end of the file"))?;
    let mut depth = 0usize;
    for &c in header {
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                ensure!(
                    depth <= NPY_MAX_NESTING,
                    "header nested deeper than {NPY_MAX_NESTING}"
                );
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let mut cur = std::io::Cursor::new(bytes);
    let header = npyz::NpyHeader::from_reader(&mut cur)?;
    let data = &bytes[cur.position() as usize..];
    let npyz::DType::Plain(ts) = header.dtype() else {
        bail!("record and sub-array dtypes are not supported (only plain numbers)");
    };
    let item = ts
        .num_bytes()
        .filter(|&n| n > 0)
        .ok_or_else(|| anyhow!("dtype {ts} has no fixed size"))?;
    let shape = header.shape();
    let count = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| anyhow!("shape {shape:?} overflows"))?;
    let expected = count
        .checked_mul(item as u64)
        .ok_or_else(|| anyhow!("shape {shape:?} overflows"))?;
    ensure!(
        data.len() as u64 == expected,
        "shape {shape:?} of {ts} needs {expected} bytes of data, the file has {}",
        data.len()
    );
    let mut out = data.to_vec();
    if ts.endianness() == npyz::Endianness::Big && item > 1 {
        for c in out.chunks_mut(item) {
            c.reverse();
        }
    }
    if header.order() == npyz::Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        out = fortran_to_c(&out, shape, item);
    }
    Ok(out)
}

/// Reorders the items of an array stored first-index-fastest into last-index-fastest order.
fn fortran_to_c(data: &[u8], shape: &[u64], item: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    let mut index = vec![0u64; shape.len()];
    for c_item in 0..data.len() / item {
        // Fortran offset of the multi-index: the first index varies fastest.
        let mut f_item = 0u64;
        for (&i, &d) in index.iter().zip(shape).rev() {
            f_item = f_item * d + i;
        }
        let f = f_item as usize * item;
        out[c_item * item..(c_item + 1) * item].copy_from_slice(&data[f..f + item]);
        // Advance the C-order multi-index: the last index varies fastest.
        for (i, &d) in index.iter_mut().zip(shape).rev() {
            *i += 1;
            if *i < d {
                break;
            }
            *i = 0;
        }
    }
    out
}

/// A zeroed buffer of `n` bytes, or an error naming the size when it cannot be had (no abort).
fn alloc_buffer(n: u64, what: &str) -> Result<Vec<u8>> {
    // The engine addresses an object with 39 bits; a larger buffer could not be bound anyway.
    const LIMIT: u64 = 1 << 39;
    if n > LIMIT {
        bail!("{what}: {n} bytes is more than the engine's buffer limit of {LIMIT} bytes");
    }
    // Linux commits memory lazily: a reservation can succeed and the writes below then run the
    // machine out of memory. Compare with what the kernel says is available first.
    if let Some(avail) = crate::inputs::available_memory()
        && n > avail
    {
        bail!("{what}: {n} bytes requested, {avail} bytes of memory available");
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n as usize)
        .map_err(|_| anyhow!("{what}: cannot allocate {n} bytes"))?;
    v.resize(n as usize, 0);
    Ok(v)
}

fn buffer_source(src: &str) -> Result<Vec<u8>> {
    let parts: Vec<&str> = src.split(':').collect();
    let size = |usage: &str| -> Result<u64> {
        parse_u64(parts.get(1).ok_or_else(|| anyhow!("{usage}"))?)
            .with_context(|| format!("the size in {src:?}"))
    };
    Ok(match parts[0] {
        "zeros" => alloc_buffer(size("zeros:BYTES")?, src)?,
        "const" => {
            let mut v = alloc_buffer(size("const:BYTES:U32")?, src)?;
            let w = parse_u64(parts.get(2).ok_or_else(|| anyhow!("const:BYTES:U32"))?)
                .with_context(|| format!("the word in {src:?}"))? as u32;
            for (b, x) in v.iter_mut().zip(w.to_le_bytes().iter().cycle()) {
                *b = *x;
            }
            v
        }
        "random" => {
            let mut v = alloc_buffer(size("random:BYTES:SEED")?, src)?;
            let mut s = parse_u64(parts.get(2).unwrap_or(&"1"))
                .with_context(|| format!("the seed in {src:?}"))?
                | 1;
            for b in v.iter_mut() {
                s ^= s >> 12;
                s ^= s << 25;
                s ^= s >> 27;
                *b = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8;
            }
            v
        }
        "raw" => crate::inputs::read_file(&src[4..])?,
        _ if src.ends_with(".npy") => read_npy(src)?,
        _ => bail!(
            "unknown buffer source {src:?} (FILE.npy, raw:FILE, zeros:N, const:N:U32, random:N:SEED)"
        ),
    })
}

pub(crate) fn write_npy(path: &str, dtype: &str, data: &[u8]) -> Result<()> {
    macro_rules! w {
        ($t:ty, $n:expr) => {{
            let v: Vec<$t> = data
                .chunks_exact($n)
                .map(|c| <$t>::from_le_bytes(c.try_into().unwrap()))
                .collect();
            npyz::to_file_1d(path, v)?
        }};
    }
    match dtype {
        "f16" => w!(half::f16, 2),
        "f32" => w!(f32, 4),
        "f64" => w!(f64, 8),
        "i8" => w!(i8, 1),
        "u8" => w!(u8, 1),
        "i16" => w!(i16, 2),
        "u16" => w!(u16, 2),
        "i32" => w!(i32, 4),
        "u32" => w!(u32, 4),
        "i64" => w!(i64, 8),
        "u64" => w!(u64, 8),
        _ => bail!("unknown dtype {dtype:?}"),
    }
    Ok(())
}

/// Runs the command.
/// `--spec ID=VALUE` options.
pub(crate) fn parse_spec(specs: &[String]) -> Result<SpecConstants> {
    let mut spec = SpecConstants::new();
    for s in specs {
        let (id, v) = s
            .split_once('=')
            .ok_or_else(|| anyhow!("--spec ID=VALUE, got {s:?}"))?;
        let value = if v.contains('.') {
            v.parse::<f32>()
                .map(|f| f.to_bits() as u64)
                .map_err(anyhow::Error::from)
        } else {
            parse_u64(v)
        }
        .with_context(|| format!("--spec {s:?}: the value {v:?}"))?;
        let id = id
            .trim()
            .parse()
            .with_context(|| format!("--spec {s:?}: the id {id:?}"))?;
        spec.insert(id, value);
    }
    Ok(spec)
}

/// `--groups X,Y,Z`: exactly three counts, as vkCmdDispatch takes.
pub(crate) fn parse_groups(s: &str) -> Result<[u32; 3]> {
    let g: Vec<u32> = s
        .split(',')
        .map(|x| x.trim().parse())
        .collect::<Result<_, _>>()
        .with_context(|| format!("--groups {s:?}: expected X,Y,Z"))?;
    <[u32; 3]>::try_from(g).map_err(|g| {
        anyhow!(
            "--groups {s:?}: expected X,Y,Z (three counts), got {}",
            g.len()
        )
    })
}

/// `--push`: hex bytes after `0x`, otherwise a file.
fn parse_push(p: &str) -> Result<Vec<u8>> {
    let Some(hex) = p.strip_prefix("0x") else {
        return crate::inputs::read_file(p)
            .with_context(|| format!("--push {p:?} (a file; hex bytes start with 0x)"));
    };
    let h: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
    if !h.len().is_multiple_of(2) {
        bail!("--push hex has an odd number of digits");
    }
    (0..h.len())
        .step_by(2)
        .map(|i| {
            h.get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| {
                    anyhow!(
                        "--push {p:?}: {:?} is not a hex byte",
                        h.get(i..i + 2).unwrap_or("")
                    )
                })
        })
        .collect()
}

/// `--out SET:BINDING=FILE.npy[:DTYPE]` or `=FILE.bin` options.
pub(crate) fn write_outs(
    outs: &[String],
    buffers: &std::collections::BTreeMap<(u32, u32), Vec<u8>>,
) -> Result<()> {
    for o in outs {
        let (key, dst) = parse_binding(o)?;
        if key.2.is_some() {
            bail!("--out {o:?}: buffers of descriptor arrays cannot be written out yet");
        }
        let key = (key.0, key.1);
        let data = buffers
            .get(&key)
            .ok_or_else(|| anyhow!("--out {}:{}: no such buffer", key.0, key.1))?;
        if let Some((path, dtype)) = dst.split_once(".npy:") {
            write_npy(&format!("{path}.npy"), dtype, data)?;
        } else if dst.ends_with(".npy") {
            write_npy(dst, "f32", data)?;
        } else {
            std::fs::write(dst, data).with_context(|| format!("writing {dst}"))?;
        }
    }
    Ok(())
}

/// Runs `coopmat run`; returns the exit status.
pub fn run(args: Args) -> Result<u8> {
    let a = &args.dispatch;
    let bytes = crate::inputs::read_file(&a.file)?;
    let module = coopmat_spirv::Module::from_bytes(&bytes)
        .with_context(|| format!("parsing {}", a.file.display()))?;
    let spec = parse_spec(&a.spec)?;
    let opts = args.engine.options();
    let pipe = Pipeline::compile(&module, a.entry.as_deref().unwrap_or(""), &spec, &opts)?;
    let groups = parse_groups(&a.groups)?;
    let mut res = Resources {
        buffers: a.buffers()?,
        push_constants: a.push_constants()?,
        buffer_arrays: a.buffer_arrays()?,
    };
    // Missing bindings or short buffers are reported before the run (dispatch checks too).
    // (Arrays of descriptors are checked by the engine.)
    for b in pipe.bindings().iter().filter(|b| b.count == 1) {
        match res.buffers.get(&(b.set, b.binding)) {
            None => bail!(
                "binding {}:{}{} is used by the shader but no --buffer gives it",
                b.set,
                b.binding,
                b.name
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
            Some(v) if v.len() < b.min_size => bail!(
                "buffer {}:{} has {} bytes; the layout needs {}",
                b.set,
                b.binding,
                v.len(),
                b.min_size
            ),
            _ => {}
        }
    }
    let st = pipe.dispatch(&mut res, groups)?;
    write_outs(&a.outs, &res.buffers)?;
    let secs = st.elapsed.as_secs_f64().max(1e-9);
    println!(
        "ran {} workgroups ({} invocations, local size {:?}) in {:.3} ms: {} lane-instructions ({:.1} M/s), {} batch instructions{}",
        st.workgroups,
        st.invocations,
        pipe.local_size(),
        secs * 1e3,
        st.lane_instructions,
        st.lane_instructions as f64 / secs / 1e6,
        st.instructions,
        if st.muladd_flops > 0 {
            format!(
                ", muladd {:.2} GFLOP/s",
                st.muladd_flops as f64 / secs / 1e9
            )
        } else {
            String::new()
        }
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::npy_to_c_order;

    /// A version-1 `.npy` file with `header` (padded as numpy pads it) and `data`.
    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((h.len() as u16).to_le_bytes());
        out.extend(h.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn c_order_arrays_are_read_as_they_are() {
        let data: Vec<u8> = (1..=6u8).collect();
        let f = npy(
            "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
            &data,
        );
        assert_eq!(npy_to_c_order(&f).unwrap(), data);
    }

    #[test]
    fn fortran_order_arrays_are_transposed_to_c_order() {
        // [[1, 2, 3], [4, 5, 6]] stored column by column.
        let f = npy(
            "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }",
            &[1, 4, 2, 5, 3, 6],
        );
        assert_eq!(npy_to_c_order(&f).unwrap(), [1, 2, 3, 4, 5, 6]);
        // Big-endian 16-bit items, 3-D: item size and byte order both respected.
        let values: Vec<u16> = (0..24).collect();
        let mut fortran = Vec::new();
        for k in 0..4 {
            for j in 0..3 {
                for i in 0..2 {
                    fortran.extend(values[i * 12 + j * 4 + k].to_be_bytes());
                }
            }
        }
        let f = npy(
            "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3, 4), }",
            &fortran,
        );
        let want: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(npy_to_c_order(&f).unwrap(), want);
    }

    #[test]
    fn data_that_does_not_match_the_shape_is_refused() {
        let f = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            &[0; 12],
        );
        let e = format!("{:#}", npy_to_c_order(&f).unwrap_err());
        assert!(e.contains("needs 16 bytes of data, the file has 12"), "{e}");
        let f = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }",
            &[],
        );
        assert!(npy_to_c_order(&f).is_err());
    }

    #[test]
    fn hostile_headers_are_refused_quickly() {
        let deep = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': {}1{}, }}",
            "(".repeat(40),
            ")".repeat(40)
        );
        let e = format!("{:#}", npy_to_c_order(&npy(&deep, &[])).unwrap_err());
        assert!(e.contains("nested deeper"), "{e}");
        let record = npy(
            "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
            &[0; 8],
        );
        let e = format!("{:#}", npy_to_c_order(&record).unwrap_err());
        assert!(e.contains("record"), "{e}");
        let mut long = b"\x93NUMPY\x02\x00".to_vec();
        long.extend(u32::MAX.to_le_bytes());
        let e = format!("{:#}", npy_to_c_order(&long).unwrap_err());
        assert!(e.contains("at most"), "{e}");
        assert!(npy_to_c_order(b"\x93NUMPY").is_err());
        assert!(npy_to_c_order(b"PK\x03\x04").is_err());
    }
}
