//! The [`Engine`] over coopmat's CPU execution engine (`coopmat-exec`).

use crate::runner::{Engine, SpecMap};
use coopmat_exec::{EngineOptions, Pipeline, Resources};
use std::collections::BTreeMap;

/// Runs scripts on `coopmat-exec` with these options (`SUBGROUP REQUIRED_SIZE` overrides the subgroup size).
#[derive(Clone, Debug, Default)]
pub struct ExecEngine {
    /// Options for every pipeline.
    pub options: EngineOptions,
}

/// A compiled pipeline and the subgroup size it was compiled for.
pub struct ExecPipeline {
    pipeline: Pipeline,
    subgroup_size: u32,
}

impl Engine for ExecEngine {
    type Pipeline = ExecPipeline;

    fn compile(
        &self,
        words: &[u32],
        entry_point: &str,
        spec: &SpecMap,
        subgroup_size: Option<u32>,
    ) -> Result<ExecPipeline, String> {
        let module =
            coopmat_spirv::Module::from_words(words).map_err(|e| format!("bad module: {e}"))?;
        let mut options = self.options.clone();
        if let Some(s) = subgroup_size {
            options.subgroup_size = s;
        }
        let pipeline =
            Pipeline::compile(&module, entry_point, spec, &options).map_err(|e| e.to_string())?;
        Ok(ExecPipeline {
            pipeline,
            subgroup_size: options.subgroup_size,
        })
    }

    fn local_size(&self, p: &ExecPipeline) -> [u32; 3] {
        p.pipeline.local_size()
    }

    fn subgroup_size(&self, p: &ExecPipeline) -> u32 {
        p.subgroup_size
    }

    fn dispatch(
        &self,
        p: &ExecPipeline,
        buffers: &mut BTreeMap<(u32, u32), Vec<u8>>,
        push_constants: &mut Vec<u8>,
        groups: [u32; 3],
    ) -> Result<u64, String> {
        let mut res = Resources {
            buffers: std::mem::take(buffers),
            push_constants: std::mem::take(push_constants),
        };
        let r = p.pipeline.dispatch(&mut res, groups);
        *buffers = res.buffers;
        *push_constants = res.push_constants;
        r.map(|st| st.lane_instructions).map_err(|e| e.to_string())
    }
}
