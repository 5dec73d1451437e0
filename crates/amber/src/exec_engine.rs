//! The [`Engine`] over coopmat's CPU execution engine (`coopmat-exec`).

use crate::runner::{Engine, SpecMap};
use coopmat_exec::{EngineOptions, Pipeline, Resources};
use std::collections::BTreeMap;

/// Runs scripts on `coopmat-exec` with these options (`SUBGROUP REQUIRED_SIZE` overrides the subgroup size).
#[derive(Clone, Debug, Default)]
pub struct ExecEngine {
    /// Options for every pipeline. With `observe_uniformity`, every dispatch also checks the
    /// divergence analysis (`coopmat-analysis`) against what the engine observed and fails on a
    /// value the analysis calls subgroup-uniform that differed within a subgroup.
    pub options: EngineOptions,
    /// With `observe_uniformity`: values observed, violations, observed-uniform values the
    /// analysis calls divergent, over all dispatches.
    pub uniformity: std::sync::Arc<std::sync::Mutex<[usize; 3]>>,
    /// With `profile_ops`: the op times of every dispatch, summed.
    pub op_times: std::sync::Arc<std::sync::Mutex<Vec<coopmat_exec::OpTime>>>,
}

/// A compiled pipeline and the subgroup size it was compiled for.
pub struct ExecPipeline {
    pipeline: Pipeline,
    subgroup_size: u32,
    /// Kept for the uniformity check.
    module: Option<coopmat_spirv::Module>,
}

impl Engine for ExecEngine {
    type Pipeline = ExecPipeline;

    fn compile(
        &self,
        words: &[u32],
        entry_point: &str,
        spec: &SpecMap,
        subgroup_size: Option<u32>,
        robust: bool,
    ) -> Result<ExecPipeline, String> {
        let module =
            coopmat_spirv::Module::from_words(words).map_err(|e| format!("bad module: {e}"))?;
        let mut options = self.options.clone();
        if let Some(s) = subgroup_size {
            options.subgroup_size = s;
        }
        options.robust |= robust;
        let pipeline =
            Pipeline::compile(&module, entry_point, spec, &options).map_err(|e| e.to_string())?;
        Ok(ExecPipeline {
            pipeline,
            subgroup_size: options.subgroup_size,
            module: options.observe_uniformity.then_some(module),
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
        arrays: &mut BTreeMap<(u32, u32), Vec<Vec<u8>>>,
        push_constants: &mut Vec<u8>,
        groups: [u32; 3],
    ) -> Result<u64, String> {
        let mut res = Resources {
            buffers: std::mem::take(buffers),
            push_constants: std::mem::take(push_constants),
            buffer_arrays: std::mem::take(arrays),
        };
        let r = p.pipeline.dispatch(&mut res, groups);
        *buffers = res.buffers;
        *arrays = res.buffer_arrays;
        *push_constants = res.push_constants;
        let st = r.map_err(|e| e.to_string())?;
        if !st.op_times.is_empty() {
            let mut all = self.op_times.lock().unwrap_or_else(|e| e.into_inner());
            coopmat_exec::OpTime::merge(&mut all, st.op_times);
        }
        let instructions = st.lane_instructions;
        if let Some(m) = &p.module {
            self.check_uniformity(m, &p.pipeline)?;
        }
        Ok(instructions)
    }
}

impl ExecEngine {
    fn check_uniformity(&self, m: &coopmat_spirv::Module, p: &Pipeline) -> Result<(), String> {
        let a = coopmat_analysis::Analysis::run(m);
        let check = a.check_observed(&p.observed_uniformity());
        let mut s = self.uniformity.lock().unwrap_or_else(|e| e.into_inner());
        s[0] += check.values;
        s[1] += check.violations.len();
        s[2] += check.called_divergent;
        let bad = check.violations;
        match bad.first() {
            None => Ok(()),
            Some(id) => Err(format!(
                "divergence analysis unsound: %{id} differed within a subgroup but is analysed as {}",
                a.value(*id).as_str()
            )),
        }
    }
}
