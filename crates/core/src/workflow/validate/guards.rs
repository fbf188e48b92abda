//! Warnings about a step's outputs used where that step may not have completed: it
//! may be skipped (a `when`, or a skipped need) or fail (`continue_on_error`, a trigger
//! that runs after failures) and its user still run, unguarded by `state` or `default`.

use super::{OUTPUT_FIELDS, Pending, Uses, Validator};
use crate::workflow::Trigger;
use std::collections::{BTreeSet, HashMap};

impl Validator<'_, '_, '_> {
    /// Warns about outputs of a step used where that step may not have completed.
    pub(super) fn unguarded(
        &mut self,
        pending: &[Pending],
        index: &HashMap<&str, usize>,
        uses: &Uses,
    ) {
        let may_skip = may_skip(pending);
        let mut warned = BTreeSet::new();
        for u in &uses.steps {
            let (span, target) = (&u.site, &u.step);
            let Some(field) = &u.field else { continue };
            if !OUTPUT_FIELDS.contains(&field.as_str()) {
                continue;
            }
            let guarded = uses.steps.iter().any(|o| {
                o.site == *span && o.step == *target && o.field.as_deref() == Some("state")
            }) || {
                let text = &self.ctx.source[span.clone()];
                text.contains("default") || text.contains("is defined")
            };
            if guarded {
                continue;
            }
            let a = index[target.as_str()];
            let (reason, consumer) = match u.user {
                Some(s) => {
                    let s_id = &pending[s].id.value;
                    let skip = may_skip[a]
                        && !propagates(pending, index, a, s, &[Trigger::AllSuccess], false);
                    let fail = pending[a].step.continue_on_error
                        || !propagates(
                            pending,
                            index,
                            a,
                            s,
                            &[Trigger::AllSuccess, Trigger::NoneFailed],
                            true,
                        );
                    let why = if skip {
                        format!("`{target}` may be skipped and `{s_id}` still run")
                    } else if fail {
                        format!("`{target}` may fail and `{s_id}` still run")
                    } else {
                        continue;
                    };
                    (why, format!("step `{s_id}`"))
                }
                None => {
                    let why = if may_skip[a] {
                        format!("`{target}` may be skipped")
                    } else if pending[a].step.continue_on_error {
                        format!("`{target}` may fail (it has continue_on_error)")
                    } else {
                        continue;
                    };
                    (why, "[output]".to_owned())
                }
            };
            if !warned.insert((span.start, target.clone(), field.clone())) {
                continue;
            }
            let needle = format!("steps.{target}.{field}");
            let at = match self.ctx.source[span.clone()].find(&needle) {
                Some(off) => span.start + off..span.start + off + needle.len(),
                None => span.clone(),
            };
            self.ctx.warn(
                at,
                format!(
                    "{consumer} uses `steps.{target}.{field}`, but {reason}; guard it, e.g. {{% if steps.{target}.state == \"completed\" %}}…{{% endif %}}"
                ),
            );
        }
    }
}

/// Whether each step may end `skipped`: it has a `when`, or a need that may be skipped
/// makes it skipped too.
fn may_skip(pending: &[Pending]) -> Vec<bool> {
    let index: HashMap<&str, usize> = pending
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.value.as_str(), i))
        .collect();
    let mut memo: Vec<Option<bool>> = vec![None; pending.len()];
    fn go(
        i: usize,
        pending: &[Pending],
        index: &HashMap<&str, usize>,
        memo: &mut Vec<Option<bool>>,
    ) -> bool {
        if let Some(v) = memo[i] {
            return v;
        }
        let p = &pending[i];
        let inherits = matches!(p.step.trigger, Trigger::AllSuccess | Trigger::OneSuccess);
        let v = p.has_when
            || (inherits
                && p.needs
                    .iter()
                    .any(|n| go(index[n.value.as_str()], pending, index, memo)));
        memo[i] = Some(v);
        v
    }
    (0..pending.len())
        .map(|i| go(i, pending, &index, &mut memo))
        .collect()
}

/// Whether a skip (or failure) of step `a` always stops step `s`: `s`'s trigger is one
/// of `triggers` and one of its needs is `a` or is stopped by `a` in turn.
fn propagates(
    pending: &[Pending],
    index: &HashMap<&str, usize>,
    a: usize,
    s: usize,
    triggers: &[Trigger],
    failure: bool,
) -> bool {
    fn go(
        pending: &[Pending],
        index: &HashMap<&str, usize>,
        a: usize,
        s: usize,
        triggers: &[Trigger],
        failure: bool,
        memo: &mut [Option<bool>],
    ) -> bool {
        if let Some(v) = memo[s] {
            return v;
        }
        let v = triggers.contains(&pending[s].step.trigger)
            && pending[s].needs.iter().any(|n| {
                let j = index[n.value.as_str()];
                if j == a {
                    !(failure && pending[a].step.continue_on_error)
                } else {
                    go(pending, index, a, j, triggers, failure, memo)
                }
            });
        memo[s] = Some(v);
        v
    }
    let mut memo = vec![None; pending.len()];
    go(pending, index, a, s, triggers, failure, &mut memo)
}
