//! Property: the validator accepts a generated workflow exactly when its `needs` form no
//! cycle and every `steps.<id>` its templates use is upstream; and every workflow it
//! accepts has its steps in a topological order with every reference upstream.
//! Validity is computed here independently of the validator.

use std::collections::BTreeSet;

use orchestrator_core::workflow::{self, Options, StepKind};
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct GenStep {
    needs: BTreeSet<usize>,
    refs: BTreeSet<usize>,
    when: bool,
}

fn gen_workflow() -> impl Strategy<Value = Vec<GenStep>> {
    (1usize..9).prop_flat_map(|n| {
        prop::collection::vec(
            (
                prop::collection::btree_set(0..n, 0..3),
                prop::collection::btree_set(0..n, 0..3),
                any::<bool>(),
            )
                .prop_map(|(needs, refs, when)| GenStep { needs, refs, when }),
            n,
        )
        .prop_map(|mut steps| {
            // A step never needs itself; that error is covered by the corpus.
            for (i, s) in steps.iter_mut().enumerate() {
                s.needs.remove(&i);
            }
            steps
        })
    })
}

fn to_toml(steps: &[GenStep]) -> String {
    let mut s = String::from(
        "[workflow]\nid = \"gen\"\ndescription = \"generated\"\n[input]\nx = { type = \"string\", default = \"v\" }\n",
    );
    for (i, st) in steps.iter().enumerate() {
        s.push_str(&format!("[steps.s{i}]\nagent = \"a\"\n"));
        let needs: Vec<String> = st.needs.iter().map(|n| format!("\"s{n}\"")).collect();
        s.push_str(&format!("needs = [{}]\n", needs.join(", ")));
        if st.when {
            s.push_str("when = \"input.x != 'skip'\"\n");
        }
        // Every reference is guarded by the step's state, so no warning is expected.
        let mut msg = String::from("{{ input.x }}");
        for r in &st.refs {
            msg.push_str(&format!(
                "{{% if steps.s{r}.state == 'completed' %}}{{{{ steps.s{r}.text }}}}{{% endif %}}"
            ));
        }
        s.push_str(&format!("message = \"{msg}\"\n"));
    }
    s
}

/// `upstream[i]`: the steps `i` transitively needs (None when there is a cycle).
fn upstream(steps: &[GenStep]) -> Option<Vec<BTreeSet<usize>>> {
    let n = steps.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut up: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    fn visit(i: usize, steps: &[GenStep], state: &mut [u8], up: &mut [BTreeSet<usize>]) -> bool {
        match state[i] {
            1 => return false,
            2 => return true,
            _ => {}
        }
        state[i] = 1;
        let mut mine = BTreeSet::new();
        for &j in &steps[i].needs {
            if !visit(j, steps, state, up) {
                return false;
            }
            mine.insert(j);
            mine.extend(up[j].iter().copied());
        }
        up[i] = mine;
        state[i] = 2;
        true
    }
    for i in 0..n {
        if !visit(i, steps, &mut state, &mut up) {
            return None;
        }
    }
    Some(up)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn accepted_exactly_when_acyclic_and_references_are_upstream(steps in gen_workflow()) {
        let source = to_toml(&steps);
        let (wf, diags) = workflow::load_str("gen.toml", &source, Options::default());
        let expected_valid = match upstream(&steps) {
            None => false,
            Some(up) => steps.iter().enumerate().all(|(i, s)| s.refs.iter().all(|r| up[i].contains(r))),
        };
        let errors: Vec<String> = diags.iter().filter(|d| d.is_error()).map(|d| d.short()).collect();
        prop_assert_eq!(wf.is_some(), expected_valid, "errors: {:?}\n{}", errors, source);
        prop_assert!(diags.iter().all(|d| d.is_error()), "guarded references warn nothing: {:?}", diags);

        if let Some(w) = wf {
            let up = upstream(&steps).unwrap();
            // Topological: every step comes after all it needs.
            let position = |id: &str| w.steps.iter().position(|s| s.id.as_str() == id).unwrap();
            for s in &w.steps {
                for n in &s.needs {
                    prop_assert!(position(n.as_str()) < position(s.id.as_str()));
                }
            }
            prop_assert_eq!(w.steps.len(), steps.len());
            // Every reference in a step's template is upstream of it.
            for s in &w.steps {
                let i: usize = s.id.as_str()[1..].parse().unwrap();
                let StepKind::Agent { message: Some(m), .. } = &s.kind else { panic!("agent step") };
                for part in m.source.split("steps.s").skip(1) {
                    let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
                    let r: usize = digits.parse().unwrap();
                    prop_assert!(up[i].contains(&r), "s{} uses s{} which is not upstream", i, r);
                }
            }
        }
    }

    /// Whatever bytes a user saves, loading never panics and errors are located.
    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]a-z_=\"{}. \\n0-9#-]{0,300}") {
        let (_, diags) = workflow::load_str("any.toml", &text, Options::default());
        for d in diags {
            prop_assert!(d.line >= 1 && d.column >= 1);
        }
    }
}
