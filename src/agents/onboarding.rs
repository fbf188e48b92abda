//! The departments of seed 004's new hire: HR (the employee record, the documents), IT
//! (the mailbox and the access of a role, which `workflows/provision-accounts.toml`
//! asks for; the laptop, ordered once the workflow's approval step says yes),
//! facilities (desk, badge) and a notifier for the hiring manager. Data contracts match
//! `workflows/employee-onboarding.toml`.

use std::sync::Arc;

use serde_json::json;

use super::{Desk, Reply, Request, add_days, fnv, object};

/// The onboarding agents under their `agents.toml` names and ports.
pub fn desks() -> Vec<(&'static str, u16, Arc<dyn Desk>)> {
    vec![
        ("hr", 7201, Arc::new(Hr)),
        ("it", 7202, Arc::new(It)),
        ("facilities", 7203, Arc::new(Facilities)),
        ("notifier", 7204, Arc::new(Notifier)),
    ]
}

/// The employee id a message mentions (`E-12345`), if any.
fn employee_id(r: &Request) -> Option<String> {
    r.field("employee_id").or_else(|| {
        r.text
            .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
            .find(|w| w.starts_with("E-") && w.len() > 2)
            .map(|w| w.trim_end_matches(['.', ':']).to_owned())
    })
}

fn id_for(name: &str, start: &str) -> String {
    format!("E-{:05}", fnv(&format!("{name}|{start}")) % 100_000)
}

/// HR: the employee record, and the welcome pack and contract.
pub struct Hr;

impl Desk for Hr {
    fn name(&self) -> &'static str {
        "HR"
    }
    fn description(&self) -> &'static str {
        "Creates employee records and sends new hires their documents"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![
            (
                "create-employee-record",
                "Employee record",
                "Creates the record of a new hire and returns the employee id",
                "Create an employee record for Ada Lovelace, engineer, starting 2026-12-01",
            ),
            (
                "send-documents",
                "Documents",
                "Sends the welcome pack and the contract to an employee",
                "Send the welcome pack and the contract to employee E-12345",
            ),
        ]
    }
    fn handle(&self, r: &Request) -> Reply {
        if r.field("action").as_deref() == Some("create_employee") || r.mentions("record") {
            let Some(name) = r.field("name") else {
                return Reply::Refuse("an employee record needs data `name`".into());
            };
            let role = r.field("role").unwrap_or_else(|| "employee".into());
            let start = r.field("start_date").unwrap_or_default();
            let id = id_for(&name, &start);
            return Reply::Done {
                text: format!(
                    "Created employee record {id} for {name}, {role}, starting {start}; payroll and benefits enrolment are open."
                ),
                data: object([
                    ("employee_id", json!(id)),
                    ("name", json!(name)),
                    ("role", json!(role)),
                    ("start_date", json!(start)),
                ]),
            };
        }
        let Some(id) = employee_id(r) else {
            return Reply::Refuse("say which employee (an id like E-12345)".into());
        };
        let documents = ["welcome pack", "employment contract", "tax and bank forms"];
        Reply::Done {
            text: format!(
                "Sent the {} to {id} for e-signature; reminders go out after 3 days.",
                documents.join(", ")
            ),
            data: object([
                ("employee_id", json!(id)),
                ("documents", json!(documents)),
                ("sent", json!(true)),
            ]),
        }
    }
}

/// IT: mailboxes, access and laptops.
pub struct It;

/// The groups a role's people are put in.
fn groups_of(role: &str) -> Vec<&'static str> {
    match role {
        "engineer" => vec!["engineering", "source-code", "vpn"],
        "designer" => vec!["design", "design-tools", "vpn"],
        "sales" => vec!["sales", "crm"],
        _ => vec!["staff"],
    }
}

impl Desk for It {
    fn name(&self) -> &'static str {
        "IT"
    }
    fn description(&self) -> &'static str {
        "Creates email accounts, grants the access of a role, and orders laptops"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![
            (
                "create-email-account",
                "Email account",
                "Creates a mailbox for an employee",
                "Create a mailbox for employee E-12345, Ada Lovelace",
            ),
            (
                "grant-access",
                "System access",
                "Grants an employee the groups of their role (data `role`, `login`)",
                "Grant employee E-12345 (engineer) the system access of their role",
            ),
            (
                "order-laptop",
                "Laptop order",
                "Orders a laptop for an employee (approved by the workflow)",
                "Order a high-spec laptop for employee E-12345",
            ),
        ]
    }
    fn handle(&self, r: &Request) -> Reply {
        let id = employee_id(r).unwrap_or_else(|| "the new hire".into());
        if r.skill.as_deref() == Some("create-email-account") || r.mentions("mailbox") {
            let Some(name) = r.field("name") else {
                return Reply::Refuse("a mailbox needs data `name`".into());
            };
            let local: String = name
                .to_lowercase()
                .split_whitespace()
                .map(|w| {
                    w.chars()
                        .filter(char::is_ascii_alphanumeric)
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(".");
            let email = format!("{local}@example.com");
            return Reply::Done {
                text: format!(
                    "Mailbox {email} created for {id}; the first-login link goes to the personal address on file."
                ),
                data: object([("email", json!(email)), ("employee_id", json!(id))]),
            };
        }
        if r.skill.as_deref() == Some("grant-access") || r.mentions("system access") {
            let Some(role) = r.field("role") else {
                return Reply::Refuse("access needs data `role`".into());
            };
            let login = r.field("login").unwrap_or_else(|| id.clone());
            let groups = groups_of(&role);
            return Reply::Done {
                text: format!(
                    "Granted {login} the access of their role ({role}): {}.",
                    groups.join(", ")
                ),
                data: object([
                    ("groups", json!(groups)),
                    ("login", json!(login)),
                    ("employee_id", json!(id)),
                ]),
            };
        }
        if r.mentions("laptop") {
            let high = r.mentions("high-spec");
            let model = if high {
                "16-inch, 32 GB RAM, 1 TB"
            } else {
                "14-inch, 16 GB RAM, 512 GB"
            };
            let order = format!("L-{:05}", fnv(&r.text) % 100_000);
            let before = r
                .text
                .split("before ")
                .nth(1)
                .map(|s| s.trim_end_matches('.').trim().to_owned());
            let delivery = before
                .as_deref()
                .and_then(|d| add_days(d, -3))
                .unwrap_or_else(|| "within 5 working days".into());
            return Reply::Done {
                text: format!("ordered a {model} laptop, delivery {delivery} (order {order})"),
                data: object([
                    ("order", json!(order)),
                    ("model", json!(model)),
                    ("delivery", json!(delivery)),
                ]),
            };
        }
        Reply::Refuse(
            "IT can create a mailbox, grant system access or order a laptop; which?".into(),
        )
    }
}

/// Facilities: desks and badges.
pub struct Facilities;

impl Desk for Facilities {
    fn name(&self) -> &'static str {
        "Facilities"
    }
    fn description(&self) -> &'static str {
        "Assigns desks and prints building badges"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![
            (
                "assign-desk",
                "Desk",
                "Assigns a desk from a start date",
                "Assign a desk to Ada Lovelace from 2026-12-01",
            ),
            (
                "print-badge",
                "Badge",
                "Prints a building badge",
                "Print a building badge for employee E-12345",
            ),
        ]
    }
    fn handle(&self, r: &Request) -> Reply {
        let id = employee_id(r).unwrap_or_else(|| "the new hire".into());
        if r.mentions("desk") {
            let h = fnv(&id);
            let desk = format!("{}-{:02}", 2 + h % 4, 1 + (h / 7) % 40);
            let floor = ["second", "third", "fourth", "fifth"][(h % 4) as usize];
            return Reply::Done {
                text: format!(
                    "Desk {desk} ({floor} floor, by the window) assigned to {id}, with a monitor and a locker."
                ),
                data: object([("desk", json!(desk)), ("employee_id", json!(id))]),
            };
        }
        if r.mentions("badge") {
            let badge = format!("B-{:06}", fnv(&format!("badge{id}")) % 1_000_000);
            return Reply::Done {
                text: format!(
                    "Badge {badge} printed for {id}; it waits at reception on the first day."
                ),
                data: object([("badge", json!(badge)), ("employee_id", json!(id))]),
            };
        }
        Reply::Refuse("facilities can assign a desk or print a badge; which?".into())
    }
}

/// Sends notices (to the hiring manager, here).
pub struct Notifier;

impl Desk for Notifier {
    fn name(&self) -> &'static str {
        "Notifier"
    }
    fn description(&self) -> &'static str {
        "Sends email notices"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![(
            "notify",
            "Notify",
            "Emails a notice to a recipient (data `to`, `subject`; the text is the body)",
            "Tell hiring.manager@example.com that onboarding is done",
        )]
    }
    fn handle(&self, r: &Request) -> Reply {
        let Some(to) = r.field("to") else {
            return Reply::Refuse("a notice needs data `to`".into());
        };
        let subject = r.field("subject").unwrap_or_else(|| "Notice".into());
        let id = format!("N-{:06}", fnv(&r.text) % 1_000_000);
        Reply::Done {
            text: format!("Emailed \"{subject}\" to {to} (message {id})."),
            data: object([
                ("sent_to", json!(to)),
                ("subject", json!(subject)),
                ("message_id", json!(id)),
            ]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_id_flows_into_the_later_requests() {
        let r = Request {
            data: object([
                ("action", json!("create_employee")),
                ("name", json!("Ada Lovelace")),
                ("start_date", json!("2026-12-01")),
            ]),
            ..Default::default()
        };
        let Reply::Done { data, .. } = Hr.handle(&r) else {
            panic!()
        };
        let id = data["employee_id"].as_str().unwrap().to_owned();
        let laptop = Request {
            text: format!(
                "Order a high-spec laptop for employee {id}, to arrive before 2026-12-01."
            ),
            ..Default::default()
        };
        let Reply::Done { data, text } = It.handle(&laptop) else {
            panic!()
        };
        assert_eq!(data["delivery"], "2026-11-28", "{text}");
        let desk = Request {
            text: format!("Assign a desk to Ada Lovelace (employee {id}) from 2026-12-01."),
            ..Default::default()
        };
        let Reply::Done { data, .. } = Facilities.handle(&desk) else {
            panic!()
        };
        assert_eq!(data["employee_id"], id.as_str());
    }
}
