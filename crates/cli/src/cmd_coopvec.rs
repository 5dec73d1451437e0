//! `coopmat coopvec-convert`: the host-side matrix conversion of `vkConvertCooperativeVectorMatrixNV`
//! (layouts, component types, and the size query), for the engine's optimal layouts.

use anyhow::{Context, Result, anyhow, bail};
use coopmat_exec::coopvec::{
    COMPONENT_TYPES, ComponentType, MatrixLayout, MatrixSide, convert_matrix, converted_size,
};
use std::path::PathBuf;

fn component_type(s: &str) -> Result<ComponentType, String> {
    ComponentType::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = COMPONENT_TYPES.iter().map(|t| t.name()).collect();
        format!("unknown component type {s:?} (one of {})", names.join(", "))
    })
}

fn layout(s: &str) -> Result<MatrixLayout, String> {
    MatrixLayout::from_name(s).ok_or_else(|| {
        format!(
            "unknown layout {s:?} (row-major, column-major, inferencing-optimal, training-optimal)"
        )
    })
}

/// Arguments of `coopmat coopvec-convert`.
#[derive(clap::Args)]
pub struct Args {
    /// The source matrix: a 2-D `.npy` (its shape, dtype and order give rows, columns, type and
    /// layout) or raw bytes described by the --src-* options. Not read with --size.
    pub input: Option<PathBuf>,
    /// Where to write the converted matrix (raw bytes).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print the byte size of the converted matrix and stop (the size query).
    #[arg(long)]
    pub size: bool,
    /// Rows (for raw input and --size).
    #[arg(long)]
    pub rows: Option<u32>,
    /// Columns (for raw input and --size).
    #[arg(long)]
    pub cols: Option<u32>,
    /// Component type of raw input: float16, float32, float64, sint8, ..., e4m3, e5m2.
    #[arg(long, value_parser = component_type)]
    pub src_type: Option<ComponentType>,
    /// Layout of raw input.
    #[arg(long, value_parser = layout, default_value = "row-major")]
    pub src_layout: MatrixLayout,
    /// Row (column) stride of raw row-major (column-major) input in bytes; 0 = tightly packed.
    #[arg(long, default_value_t = 0)]
    pub src_stride: u64,
    /// Component type to convert to.
    #[arg(long, value_parser = component_type)]
    pub dst_type: ComponentType,
    /// Layout to convert to.
    #[arg(long, value_parser = layout)]
    pub dst_layout: MatrixLayout,
    /// Row (column) stride of a row-major (column-major) result in bytes; 0 = tightly packed.
    #[arg(long, default_value_t = 0)]
    pub dst_stride: u64,
}

/// A 2-D `.npy` matrix: rows, columns, its side (type and layout) and its data bytes.
fn read_npy(path: &PathBuf) -> Result<(u32, u32, MatrixSide, Vec<u8>)> {
    let bytes = crate::inputs::read_file(path)?;
    let mut cur = std::io::Cursor::new(&bytes[..]);
    let header = npyz::NpyHeader::from_reader(&mut cur)
        .with_context(|| format!("{}: not a .npy file", path.display()))?;
    let shape = header.shape().to_vec();
    let [rows, cols] = shape[..] else {
        bail!(
            "{}: a matrix needs a 2-D array, this one has shape {shape:?}",
            path.display()
        );
    };
    let npyz::DType::Plain(ts) = header.dtype() else {
        bail!("{}: structured dtypes are not matrices", path.display());
    };
    use npyz::TypeChar;
    let ty = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 2) => ComponentType::F16,
        (TypeChar::Float, 4) => ComponentType::F32,
        (TypeChar::Float, 8) => ComponentType::F64,
        (TypeChar::Int, 1) => ComponentType::S8,
        (TypeChar::Int, 2) => ComponentType::S16,
        (TypeChar::Int, 4) => ComponentType::S32,
        (TypeChar::Int, 8) => ComponentType::S64,
        (TypeChar::Uint, 1) => ComponentType::U8,
        (TypeChar::Uint, 2) => ComponentType::U16,
        (TypeChar::Uint, 4) => ComponentType::U32,
        (TypeChar::Uint, 8) => ComponentType::U64,
        _ => bail!("{}: dtype {ts} has no component type", path.display()),
    };
    let (rows, cols) = (
        u32::try_from(rows).context("too many rows")?,
        u32::try_from(cols).context("too many columns")?,
    );
    let mut data = bytes[cur.position() as usize..].to_vec();
    let n = ty.bytes() as usize;
    if ts.endianness() == npyz::Endianness::Big && n > 1 {
        for c in data.chunks_mut(n) {
            c.reverse();
        }
    }
    let layout = match header.order() {
        npyz::Order::C => MatrixLayout::RowMajor,
        npyz::Order::Fortran => MatrixLayout::ColumnMajor,
    };
    Ok((
        rows,
        cols,
        MatrixSide {
            ty,
            layout,
            stride: 0,
        },
        data,
    ))
}

/// Runs `coopmat coopvec-convert`; returns the exit status.
pub fn run(a: Args) -> Result<u8> {
    let dst = MatrixSide {
        ty: a.dst_type,
        layout: a.dst_layout,
        stride: a.dst_stride,
    };
    let need = |v: Option<u32>, what: &str| v.ok_or_else(|| anyhow!("{what} is needed"));
    if a.size {
        let (rows, cols) = match &a.input {
            Some(p) if p.extension().is_some_and(|e| e == "npy") => {
                let (r, c, _, _) = read_npy(p)?;
                (r, c)
            }
            _ => (need(a.rows, "--rows")?, need(a.cols, "--cols")?),
        };
        outln!("{}", converted_size(rows, cols, dst)?);
        return Ok(0);
    }
    let input = a
        .input
        .as_ref()
        .ok_or_else(|| anyhow!("an input matrix is needed (or --size)"))?;
    let (rows, cols, src, data) = if input.extension().is_some_and(|e| e == "npy") {
        read_npy(input)?
    } else {
        let data = crate::inputs::read_file(input)?;
        let src = MatrixSide {
            ty: a
                .src_type
                .ok_or_else(|| anyhow!("--src-type is needed for raw input"))?,
            layout: a.src_layout,
            stride: a.src_stride,
        };
        (need(a.rows, "--rows")?, need(a.cols, "--cols")?, src, data)
    };
    let output = a
        .output
        .as_ref()
        .ok_or_else(|| anyhow!("--output is needed (or --size)"))?;
    let size = converted_size(rows, cols, dst)?;
    if size > 1 << 34 {
        bail!("the converted {rows}x{cols} matrix would take {size} bytes");
    }
    let mut out = vec![0u8; size as usize];
    let n = convert_matrix(rows, cols, src, &data, dst, &mut out)
        .with_context(|| format!("converting {}", input.display()))?;
    std::fs::write(output, &out[..n as usize])
        .with_context(|| format!("writing {}", output.display()))?;
    eprintln!(
        "{rows}x{cols} {} {} -> {} {}: {n} bytes",
        src.ty.name(),
        src.layout.name(),
        dst.ty.name(),
        dst.layout.name()
    );
    Ok(0)
}
