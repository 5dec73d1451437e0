//! `coopmat run`: execute a compute shader on the CPU engine.

use anyhow::{Context, Result, anyhow, bail};
use coopmat_exec::{Pipeline, Resources, SpecConstants};
use std::path::PathBuf;

/// What a dispatch needs, shared by `coopmat run`, `coopmat gpu run` and `coopmat diff`.
#[derive(clap::Args)]
pub struct DispatchArgs {
    /// The SPIR-V binary.
    pub file: PathBuf,
    /// Entry point name (default: the first GLCompute entry point).
    #[arg(long, value_parser = non_empty_name)]
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
    /// The device address of buffer SET:BINDING (for PhysicalStorageBuffer pointers), written as 8
    /// little-endian bytes: push:OFFSET=SET:BINDING (into the push constants at byte OFFSET, which
    /// --push must cover) or SET:BINDING@OFFSET=SET:BINDING (into that buffer).
    #[arg(long = "address")]
    pub addresses: Vec<String>,
    /// Write buffer SET:BINDING=FILE.npy[:DTYPE] (DTYPE f16,f32,f64,i8..i64,u8..u64; default f32)
    /// or FILE.bin (raw bytes).
    #[arg(long = "out")]
    pub outs: Vec<String>,
}

/// An entry point name: an empty one names nothing (it would otherwise mean "the default").
fn non_empty_name(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("an entry point name cannot be empty (leave --entry out for the first GLCompute entry point)".into())
    } else {
        Ok(s.to_string())
    }
}

impl DispatchArgs {
    /// The buffers the options name, by (set, binding).
    pub fn buffers(&self) -> Result<std::collections::BTreeMap<(u32, u32), Vec<u8>>> {
        self.check_unique_bindings()?;
        let mut out = std::collections::BTreeMap::new();
        for b in &self.buffers {
            let (key, src) = parse_binding(b)?;
            if key.2.is_none() {
                let bytes = buffer_source(src).with_context(|| format!("--buffer {b:?}"))?;
                out.insert((key.0, key.1), bytes);
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
                parts.entry((key.0, key.1)).or_default().insert(
                    i,
                    buffer_source(src).with_context(|| format!("--buffer {b:?}"))?,
                );
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

    /// The `--address` options.
    pub fn addresses(&self) -> Result<Vec<coopmat_gpu::AddressPatch>> {
        self.addresses
            .iter()
            .map(|a| parse_address(a).with_context(|| format!("--address {a:?}")))
            .collect()
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

/// `push:OFFSET=SET:BINDING` or `SET:BINDING@OFFSET=SET:BINDING`.
fn parse_address(s: &str) -> Result<coopmat_gpu::AddressPatch> {
    use coopmat_gpu::AddressDest;
    let (dest, of) = s
        .split_once('=')
        .ok_or_else(|| anyhow!("expected DEST=SET:BINDING"))?;
    let pair = |t: &str| -> Result<(u32, u32)> {
        let (a, b) = t
            .split_once(':')
            .ok_or_else(|| anyhow!("expected SET:BINDING, got {t:?}"))?;
        Ok((a.parse()?, b.parse()?))
    };
    let dest = match dest.strip_prefix("push:") {
        Some(at) => AddressDest::Push(at.parse().context("the push-constant offset")?),
        None => {
            let (key, at) = dest.split_once('@').ok_or_else(|| {
                anyhow!("DEST is push:OFFSET or SET:BINDING@OFFSET, got {dest:?}")
            })?;
            AddressDest::Buffer(pair(key)?, at.parse().context("the buffer offset")?)
        }
    };
    Ok(coopmat_gpu::AddressPatch {
        dest,
        of: pair(of)?,
    })
}

/// Writes the engine's device addresses the `--address` options ask for into `res`.
pub(crate) fn apply_addresses(
    res: &mut Resources,
    patches: &[coopmat_gpu::AddressPatch],
) -> Result<()> {
    for p in patches {
        let address = res
            .device_address(p.of.0, p.of.1)
            .ok_or_else(|| anyhow!("--address: no buffer {}:{}", p.of.0, p.of.1))?;
        p.apply(address, &mut res.push_constants, "--push", &mut res.buffers)
            .map_err(|e| anyhow!("--address: {e}"))?;
    }
    Ok(())
}

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

/// Reads a `.npy` file as the bytes of its array in C (row-major) order, little-endian.
/// The header is checked first (magic, size, nesting), then the data against it: a plain dtype,
/// exactly shape × item size bytes; Fortran-ordered arrays are transposed to C order.
fn read_npy(path: &str) -> Result<Vec<u8>> {
    let bytes = crate::inputs::read_file(path)?;
    crate::npy::to_c_order(&bytes).with_context(|| format!("{path}: not a usable .npy file"))
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
                .and_then(|w| {
                    u32::try_from(w).map_err(|_| anyhow!("{w:#x} does not fit in 32 bits"))
                })
                .with_context(|| format!("the word in {src:?}"))?;
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
    apply_addresses(&mut res, &a.addresses()?)?;
    // Missing bindings are errors and short buffers warnings, before the run.
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
            // Valid Vulkan (accesses past the end are out of bounds), but usually a mistake.
            Some(v) if v.len() < b.min_size => eprintln!(
                "warning: buffer {}:{} has {} bytes, less than the {} its block declares: accesses past its end are out of bounds",
                b.set,
                b.binding,
                v.len(),
                b.min_size
            ),
            _ => {}
        }
    }
    if res.push_constants.len() < pipe.push_constant_size() {
        eprintln!(
            "warning: --push gives {} bytes of the {} the shader's push constants declare; the rest read as 0",
            res.push_constants.len(),
            pipe.push_constant_size()
        );
    }
    let st = pipe.dispatch(&mut res, groups)?;
    write_outs(&a.outs, &res.buffers)?;
    let secs = st.elapsed.as_secs_f64().max(1e-9);
    outln!(
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
                ", muladd {:.2} GFLOP/s{}",
                st.muladd_flops as f64 / secs / 1e9,
                [
                    (st.chained_muladds, "MulAdds chained into the next"),
                    (st.tiles_in_place, "tiles read where they were staged"),
                ]
                .iter()
                .filter(|&&(n, _)| n > 0)
                .map(|(n, what)| format!(" ({n} {what})"))
                .collect::<String>()
            )
        } else {
            String::new()
        }
    );
    crate::engine_args::report_repeated_rows(st.repeated_rows);
    crate::engine_args::report_op_times(
        &st.op_times,
        "the dispatch",
        args.engine.profile_instructions,
    );
    if st.matrix_moves > 0 {
        outln!(
            "matrix copies that took their dead source's storage instead: {}",
            st.matrix_moves
        );
    }
    Ok(0)
}
