//! The three output forms: rustc-style text, a JSON array, and SARIF 2.1.0.

use crate::rules::{self, Level};
use crate::{Config, Finding, SourceLoc};
use serde_sarif::sarif;
use std::fmt::Write;

/// Rustc-style text: the finding, the source line with a caret when known, the instruction, and
/// a note per step of the chain.
pub fn human(findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        let label = match f.level {
            Level::Deny => "error",
            Level::Warn => "warning",
            Level::Info | Level::Allow => "info",
        };
        let _ = writeln!(out, "{label}[{}]: {}", f.rule, f.message);
        let place = match &f.source {
            Some(s) => s.to_string(),
            None => f.file.clone(),
        };
        let _ = writeln!(
            out,
            "  --> {place}{}",
            f.function
                .as_ref()
                .map(|n| format!(" (in function {n})"))
                .unwrap_or_default()
        );
        if let Some(s) = &f.source {
            snippet(&mut out, s);
        }
        let _ = writeln!(out, "   = instruction: {}", f.instruction);
        if f.source.is_some() && f.file != f.source.as_ref().map_or("", |s| s.file.as_str()) {
            let _ = writeln!(out, "   = module: {}", f.file);
        }
        for step in &f.chain {
            let at = step
                .source
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            let _ = writeln!(out, "   = note: {}{at}", step.note);
            let _ = writeln!(out, "           {}", step.instruction);
            if let Some(s) = &step.source
                && let Some(t) = &s.text
            {
                let _ = writeln!(out, "           | {}", t.trim_end());
            }
        }
        out.push('\n');
    }
    out
}

fn snippet(out: &mut String, s: &SourceLoc) {
    let Some(text) = &s.text else { return };
    let num = s.line.to_string();
    let pad = " ".repeat(num.len());
    let _ = writeln!(out, " {pad} |");
    let _ = writeln!(out, " {num} | {}", text.trim_end());
    // Without a column, point at the statement's first character.
    let col = match s.column {
        0 => text.len() - text.trim_start().len(),
        c => c as usize - 1,
    };
    let lead: String = text
        .chars()
        .take(col)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, " {pad} | {lead}^");
}

/// One JSON array of findings.
pub fn json(findings: &[Finding]) -> String {
    serde_json::to_string_pretty(findings).unwrap_or_else(|_| "[]".into())
}

/// A SARIF 2.1.0 log: rule metadata with the default levels, results with their source (or
/// module) locations, and each chain as a code flow.
pub fn sarif(findings: &[Finding], config: &Config) -> String {
    let text = |t: &str| sarif::MultiformatMessageString::builder().text(t).build();
    let rules_meta: Vec<sarif::ReportingDescriptor> = rules::RULES
        .iter()
        .map(|r| {
            sarif::ReportingDescriptor::builder()
                .id(r.name)
                .name(r.name)
                .short_description(text(r.summary))
                .full_description(text(r.explanation))
                .default_configuration(sarif::ReportingConfiguration {
                    enabled: Some(config.level(r) != Level::Allow),
                    level: Some(serde_json::Value::String(
                        sarif_level(config.level(r)).into(),
                    )),
                    ..Default::default()
                })
                .build()
        })
        .collect();
    let results: Vec<sarif::Result> = findings
        .iter()
        .map(|f| {
            let flow: Vec<sarif::ThreadFlowLocation> = f
                .chain
                .iter()
                .map(|s| sarif::ThreadFlowLocation {
                    location: Some(location(
                        &f.file,
                        s.source.as_ref(),
                        &s.note,
                        &s.instruction,
                    )),
                    ..Default::default()
                })
                .collect();
            let level = match f.level {
                Level::Deny => sarif::ResultLevel::Error,
                Level::Warn => sarif::ResultLevel::Warning,
                Level::Info | Level::Allow => sarif::ResultLevel::Note,
            };
            let message = sarif::Message {
                text: Some(f.message.clone()),
                ..Default::default()
            };
            let locations = vec![location(
                &f.file,
                f.source.as_ref(),
                &f.instruction,
                &f.instruction,
            )];
            let rule_index = rules::RULES
                .iter()
                .position(|r| r.name == f.rule)
                .unwrap_or(0) as i64;
            let result = sarif::Result::builder()
                .rule_id(f.rule)
                .rule_index(rule_index)
                .level(level)
                .message(message)
                .locations(locations);
            if flow.is_empty() {
                result.build()
            } else {
                let thread = sarif::ThreadFlow::builder().locations(flow).build();
                let code_flow = sarif::CodeFlow::builder()
                    .thread_flows(vec![thread])
                    .build();
                result.code_flows(vec![code_flow]).build()
            }
        })
        .collect();
    let driver = sarif::ToolComponent::builder()
        .name("coopmat lint")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules_meta)
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let log = sarif::Sarif::builder()
        .schema(sarif::SCHEMA_URL)
        .version(serde_json::Value::String("2.1.0".into()))
        .runs(vec![run])
        .build();
    serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".into())
}

fn sarif_level(l: Level) -> &'static str {
    match l {
        Level::Deny => "error",
        Level::Warn => "warning",
        Level::Info => "note",
        Level::Allow => "none",
    }
}

/// A location: the source line when known, else the module file with the instruction as a
/// logical location.
fn location(
    file: &str,
    source: Option<&SourceLoc>,
    message: &str,
    instruction: &str,
) -> sarif::Location {
    let (uri, region) = match source {
        Some(s) => (
            s.file.clone(),
            Some(sarif::Region {
                start_line: Some(s.line.max(1) as i64),
                start_column: (s.column > 0).then_some(s.column as i64),
                ..Default::default()
            }),
        ),
        None => (file.to_string(), None),
    };
    sarif::Location {
        physical_location: Some(sarif::PhysicalLocation {
            artifact_location: Some(sarif::ArtifactLocation {
                uri: Some(uri),
                ..Default::default()
            }),
            region,
            ..Default::default()
        }),
        logical_locations: Some(vec![sarif::LogicalLocation {
            name: Some(instruction.to_string()),
            kind: Some("instruction".into()),
            ..Default::default()
        }]),
        message: Some(sarif::Message {
            text: Some(message.to_string()),
            ..Default::default()
        }),
        ..Default::default()
    }
}
