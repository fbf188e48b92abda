//! The travel desk of seed 004's international trip: flights, hotels (which asks the
//! traveller to choose when two hotels fit), local activities and tour bookings, and
//! currency conversion with travel advice. Data contracts match
//! `workflows/travel-planning.toml`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Desk, Reply, Request, add_days, fnv, object, pick};

/// The travel agents under their `agents.toml` names and ports.
pub fn desks() -> Vec<(&'static str, u16, Arc<dyn Desk>)> {
    vec![
        ("flights", 7101, Arc::new(Flights)),
        ("hotels", 7102, Arc::new(Hotels)),
        ("activities", 7103, Arc::new(Activities)),
        ("currency", 7104, Arc::new(Currency)),
    ]
}

fn title(s: &str) -> String {
    let s = s.trim();
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

fn code(city: &str) -> String {
    let letters: String = city
        .chars()
        .filter(char::is_ascii_alphabetic)
        .take(3)
        .collect();
    letters.to_uppercase()
}

/// Flight search: a return flight derived from the route and dates.
pub struct Flights;

impl Desk for Flights {
    fn name(&self) -> &'static str {
        "Flights"
    }
    fn description(&self) -> &'static str {
        "Finds return flights between two cities"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![(
            "search-flights",
            "Flight search",
            "Return flights for a route, date and number of travellers",
            "Flights from London to Lisbon on 2027-03-10 for 2, back after 5 nights",
        )]
    }
    fn handle(&self, r: &Request) -> Reply {
        let (Some(from), Some(to)) = (r.field("origin"), r.field("destination")) else {
            return Reply::Refuse(
                "a flight search needs data `origin` and `destination` (cities)".into(),
            );
        };
        let (from, to) = (title(&from), title(&to));
        let depart = r
            .field("depart")
            .unwrap_or_else(|| "the requested date".into());
        let nights = r.number("nights").unwrap_or(5.0).max(1.0) as i64;
        let travellers = r.number("travellers").unwrap_or(1.0).max(1.0) as u64;
        let back = add_days(&depart, nights).unwrap_or_else(|| format!("{nights} nights later"));
        let route = format!("{from}-{to}");
        let airline = pick(&["TP", "BA", "LH", "AF", "IB", "KL"], &route);
        let number = 100 + fnv(&route) % 1800;
        let out_h = 6 + fnv(&depart) % 10;
        let duration = 2 + fnv(&format!("{to}{from}")) % 3;
        let back_h = 11 + fnv(&back) % 8;
        let fare = 90 + fnv(&format!("{route}{depart}")) % 400;
        let total = fare * travellers;
        let text = format!(
            "Outbound {airline} {number}: {from} ({}) {out_h:02}:05 → {to} ({}) {:02}:50 on {depart}. \
             Return {airline} {}: {to} {back_h:02}:20 → {from} {:02}:55 on {back}. \
             Fare {travellers} × {fare} EUR = {total} EUR, economy with one checked bag each.",
            code(&from),
            code(&to),
            (out_h + duration) % 24,
            number + 1,
            (back_h + duration) % 24,
        );
        Reply::Done {
            text,
            data: object([
                (
                    "outbound",
                    json!({ "flight": format!("{airline}{number}"), "from": from, "to": to, "date": depart }),
                ),
                (
                    "return",
                    json!({ "flight": format!("{airline}{}", number + 1), "from": to, "to": from, "date": back }),
                ),
                ("fare_per_person", json!(fare)),
                ("total", json!(total)),
                ("currency", json!("EUR")),
            ]),
        }
    }
}

/// Hotels: two fit a stay of three nights or more, and the traveller chooses.
pub struct Hotels;

struct Hotel {
    name: String,
    stars: u64,
    per_night: u64,
    address: String,
}

fn hotels(city: &str) -> Vec<Hotel> {
    let street = pick(
        &[
            "Harbour Street",
            "Market Square",
            "Station Road",
            "Park Avenue",
        ],
        city,
    );
    vec![
        Hotel {
            name: format!(
                "{} {city}",
                pick(&["Grand Hotel", "Palace", "Hotel Central"], city)
            ),
            stars: 4,
            per_night: 120 + fnv(city) % 80,
            address: format!("{} {street}, {city}", 10 + fnv(city) % 90),
        },
        Hotel {
            name: format!(
                "{} Suites {city}",
                pick(&["Riverside", "Old Town", "Garden"], city)
            ),
            stars: 3,
            per_night: 80 + fnv(&format!("{city}3")) % 40,
            address: format!("{} {street}, {city}", 100 + fnv(city) % 50),
        },
    ]
}

/// Which option an answer chooses: `1`, `2`, "first", a name, or data `{"choice": n}`.
fn choice(answer: &(String, serde_json::Map<String, Value>), options: &[Hotel]) -> Option<usize> {
    let (text, data) = answer;
    if let Some(n) = data.get("choice").and_then(Value::as_u64) {
        return (1..=options.len() as u64)
            .contains(&n)
            .then_some(n as usize - 1);
    }
    let t = text.trim().to_lowercase();
    let t = t.trim_end_matches('.');
    match t {
        "1" | "first" | "the first" | "one" | "option 1" => return Some(0),
        "2" | "second" | "the second" | "two" | "option 2" => return Some(1),
        _ => {}
    }
    options
        .iter()
        .position(|h| !t.is_empty() && h.name.to_lowercase().contains(t))
}

impl Desk for Hotels {
    fn name(&self) -> &'static str {
        "Hotels"
    }
    fn description(&self) -> &'static str {
        "Finds and books hotels; asks you to choose when several fit"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![(
            "book-hotel",
            "Hotel booking",
            "Books a hotel for a city, dates and guests, asking which when several fit",
            "A hotel in Lisbon for 5 nights from 2027-03-10 for 2 guests",
        )]
    }
    fn handle(&self, r: &Request) -> Reply {
        let Some(city) = r.field("city").map(|c| title(&c)) else {
            return Reply::Refuse("a hotel search needs data `city`".into());
        };
        let check_in = r
            .field("check_in")
            .unwrap_or_else(|| "the arrival date".into());
        let nights = r.number("nights").unwrap_or(1.0).max(1.0) as u64;
        let guests = r.number("guests").unwrap_or(1.0).max(1.0) as u64;
        let options = hotels(&city);
        let chosen = match &r.answer {
            Some(answer) => match choice(answer, &options) {
                Some(i) => i,
                None => {
                    return ask(
                        &city,
                        nights,
                        guests,
                        &check_in,
                        &options,
                        "I did not understand that choice. ",
                    );
                }
            },
            // A short stay: the best-rated hotel, no question.
            None if nights < 3 => 0,
            None => return ask(&city, nights, guests, &check_in, &options, ""),
        };
        let h = &options[chosen];
        let check_out =
            add_days(&check_in, nights as i64).unwrap_or_else(|| format!("{nights} nights later"));
        let total = h.per_night * nights;
        let confirmation = format!("H-{:05}", fnv(&format!("{}{check_in}", h.name)) % 100_000);
        let stars = "★".repeat(h.stars as usize);
        let text = format!(
            "Booked {} {stars}, {}, for {guests} guest(s): check-in {check_in}, check-out {check_out}, \
             {nights} nights × {} EUR = {total} EUR, breakfast included (confirmation {confirmation}).",
            h.name, h.address, h.per_night
        );
        Reply::Done {
            text,
            data: object([
                ("name", json!(h.name)),
                ("stars", json!(h.stars)),
                ("address", json!(h.address)),
                ("check_in", json!(check_in)),
                ("check_out", json!(check_out)),
                ("nights", json!(nights)),
                ("price_per_night", json!(h.per_night)),
                ("total", json!(total)),
                ("currency", json!("EUR")),
                ("confirmation", json!(confirmation)),
            ]),
        }
    }
}

fn ask(
    city: &str,
    nights: u64,
    guests: u64,
    check_in: &str,
    options: &[Hotel],
    preface: &str,
) -> Reply {
    let lines: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, h)| {
            format!(
                "{}) {} {}, {} EUR a night ({} EUR in all)",
                i + 1,
                h.name,
                "★".repeat(h.stars as usize),
                h.per_night,
                h.per_night * nights
            )
        })
        .collect();
    Reply::Ask {
        question: format!(
            "{preface}Two hotels in {city} fit {nights} nights from {check_in} for {guests} guest(s):\n{}\nWhich one should I book? Answer 1 or 2.",
            lines.join("\n")
        ),
        data: object([(
            "options",
            Value::Array(
                options
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        json!({ "choice": i + 1, "name": h.name, "stars": h.stars, "price_per_night": h.per_night })
                    })
                    .collect(),
            ),
        )]),
    }
}

/// Local activities: suggestions from the interests, and bookings of one tour each.
pub struct Activities;

fn activity(interest: &str, city: &str) -> (String, u64, u64) {
    let i = interest.trim().to_lowercase();
    let (name, hours) = match i.as_str() {
        "food" => (format!("{city} food and market tour"), 3),
        "history" => (format!("Old {city} walking tour"), 2),
        "temples" => (format!("{city} temples circuit"), 4),
        "art" | "museums" => (format!("{city} museum pass and guided visit"), 3),
        "nature" | "hiking" => (format!("Day hike near {city}"), 6),
        "wine" => (format!("Wine tasting outside {city}"), 4),
        other => (format!("{city} {other} experience"), 3),
    };
    let price = 25 + fnv(&name) % 60;
    (name, hours, price)
}

impl Desk for Activities {
    fn name(&self) -> &'static str {
        "Activities"
    }
    fn description(&self) -> &'static str {
        "Suggests local activities and tours, and books them"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![(
            "local-activities",
            "Local activities and tours",
            "Suggests activities for a city and interests; books a named tour",
            "Activities in Lisbon over 5 days for people who like food and history",
        )]
    }
    fn handle(&self, r: &Request) -> Reply {
        if let Some(tour) = r.field("tour") {
            let travellers = r.number("travellers").unwrap_or(1.0).max(1.0) as u64;
            let day = r.field("day").unwrap_or_else(|| "1".into());
            let reference = format!("T-{:04}", fnv(&format!("{tour}{day}")) % 10_000);
            return Reply::Done {
                text: format!("Booked \"{tour}\" for {travellers} on day {day} (ref {reference})."),
                data: object([
                    ("tour", json!(tour)),
                    ("day", json!(day)),
                    ("travellers", json!(travellers)),
                    ("reference", json!(reference)),
                ]),
            };
        }
        let Some(city) = r.field("city").map(|c| title(&c)) else {
            return Reply::Refuse("activities need data `city` (or `tour` to book one)".into());
        };
        let mut interests: Vec<String> = match r.data.get("interests") {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            // A template may have rendered the list as text: ['food', 'history'].
            Some(Value::String(s)) => s
                .split(',')
                .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
                .filter(|w| !w.is_empty())
                .collect(),
            _ => Vec::new(),
        };
        if interests.is_empty() {
            interests = vec!["history".into(), "food".into()];
        }
        let days = r.number("days").unwrap_or(3.0).max(1.0) as usize;
        let mut found: Vec<(String, u64, u64)> =
            interests.iter().map(|i| activity(i, &city)).collect();
        found.push((format!("Sunset boat trip in {city}"), 2, 35));
        found.truncate(days.clamp(2, 4));
        let lines: Vec<String> = found
            .iter()
            .map(|(n, h, p)| format!("- {n} ({h} h, {p} EUR per person)"))
            .collect();
        Reply::Done {
            text: format!("In {city} I suggest:\n{}\n", lines.join("\n")),
            data: object([(
                "activities",
                Value::Array(
                    found
                        .iter()
                        .map(|(n, h, p)| json!({ "name": n, "hours": h, "price": p }))
                        .collect(),
                ),
            )]),
        }
    }
}

/// Currency conversion at indicative rates, and travel advice.
pub struct Currency;

const CITIES: &[(&str, &str)] = &[
    ("lisbon", "EUR"),
    ("paris", "EUR"),
    ("rome", "EUR"),
    ("madrid", "EUR"),
    ("berlin", "EUR"),
    ("london", "GBP"),
    ("tokyo", "JPY"),
    ("kyoto", "JPY"),
    ("new york", "USD"),
    ("san francisco", "USD"),
    ("zurich", "CHF"),
    ("sydney", "AUD"),
    ("toronto", "CAD"),
    ("mexico city", "MXN"),
    ("bangkok", "THB"),
];

/// Units of each currency per euro (indicative).
const RATES: &[(&str, f64)] = &[
    ("EUR", 1.0),
    ("USD", 1.08),
    ("GBP", 0.85),
    ("JPY", 162.0),
    ("CHF", 0.95),
    ("AUD", 1.65),
    ("CAD", 1.47),
    ("MXN", 18.5),
    ("THB", 38.9),
];

fn local_currency(city: &str) -> &'static str {
    let c = city.trim().to_lowercase();
    CITIES
        .iter()
        .find(|(name, _)| *name == c)
        .map_or_else(|| RATES[(fnv(&c) % RATES.len() as u64) as usize].0, |x| x.1)
}

fn rate(code: &str) -> Option<f64> {
    RATES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|x| x.1)
}

impl Desk for Currency {
    fn name(&self) -> &'static str {
        "Currency and advice"
    }
    fn description(&self) -> &'static str {
        "Converts money at indicative rates and gives travel advice"
    }
    fn skills(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        vec![
            (
                "currency-conversion",
                "Currency conversion",
                "Converts an amount to a destination's local currency",
                "Convert 3000 EUR to the local currency of Tokyo",
            ),
            (
                "travel-advice",
                "Travel advice",
                "Entry requirements, health, safety and customs for a trip",
                "Travel advice for a trip from London to Lisbon",
            ),
        ]
    }
    fn handle(&self, r: &Request) -> Reply {
        let advice = r.skill.as_deref() == Some("travel-advice")
            || (r.skill.is_none() && r.data.get("amount").is_none() && r.mentions("advice"));
        if advice {
            return travel_advice(r);
        }
        let Some(amount) = r.number("amount") else {
            return Reply::Refuse("a conversion needs a numeric data `amount`".into());
        };
        let from = r
            .field("from")
            .unwrap_or_else(|| "EUR".into())
            .to_uppercase();
        let city = r.field("city").map(|c| title(&c)).unwrap_or_default();
        let to = local_currency(&city);
        let Some(from_rate) = rate(&from) else {
            return Reply::Refuse(format!("no rate for the currency {from}"));
        };
        let rate = rate(to).unwrap_or(1.0) / from_rate;
        let converted = (amount * rate * 100.0).round() / 100.0;
        let text = if from == to {
            format!("{city} uses {to}: no conversion needed for {amount} {from}.")
        } else {
            format!(
                "{amount} {from} is about {converted} {to} in {city} (indicative rate {rate:.4}; cards are widely accepted, carry a little cash)."
            )
        };
        Reply::Done {
            text,
            data: object([
                ("amount", json!(amount)),
                ("from", json!(from)),
                ("to", json!(to)),
                ("rate", json!((rate * 10_000.0).round() / 10_000.0)),
                ("converted", json!(converted)),
            ]),
        }
    }
}

fn travel_advice(r: &Request) -> Reply {
    // "... a trip from X to Y on DATE: ..." — the cities are in the text.
    let text = &r.text;
    let between = |a: &str, b: &str| -> Option<String> {
        let start = text.find(a)? + a.len();
        let end = text[start..].find(b)? + start;
        Some(text[start..end].trim().to_owned())
    };
    let to = r
        .field("destination")
        .or_else(|| between(" to ", " on "))
        .unwrap_or_else(|| "your destination".into());
    let to = title(&to);
    let currency = local_currency(&to);
    let items = [
        (
            "entry",
            format!(
                "Check that your passport is valid for at least six months after you leave {to}; look up visa or electronic travel authorisation rules for your nationality before booking."
            ),
        ),
        (
            "health",
            "Carry travel insurance that covers medical care; no vaccinations are required for most itineraries, but check your routine ones are up to date.".to_owned(),
        ),
        (
            "safety",
            format!(
                "{to} is generally safe; watch for pickpockets on busy trams and at viewpoints, and use licensed taxis or ride apps at night."
            ),
        ),
        (
            "customs",
            format!(
                "The local currency is {currency}; tipping 5-10% is appreciated in restaurants. Declare cash over 10,000 EUR (or equivalent) when crossing borders."
            ),
        ),
    ];
    let text = items
        .iter()
        .map(|(k, v)| format!("{}: {v}", title(k)))
        .collect::<Vec<_>>()
        .join("\n");
    Reply::Done {
        text: text + "\n",
        data: items
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    fn request(data: Value) -> Request {
        Request {
            data: data.as_object().cloned().unwrap_or_default(),
            ..Default::default()
        }
    }

    #[test]
    fn the_hotel_asks_for_long_stays_and_books_the_choice() {
        let mut r = request(
            json!({"city": "lisbon", "check_in": "2027-03-10", "nights": "5", "guests": "2"}),
        );
        let Reply::Ask { question, data } = Hotels.handle(&r) else {
            panic!("asks")
        };
        assert!(question.contains("Answer 1 or 2"), "{question}");
        assert_eq!(data["options"].as_array().unwrap().len(), 2);
        r.answer = Some(("2".into(), Map::new()));
        let Reply::Done { data, .. } = Hotels.handle(&r) else {
            panic!("books")
        };
        assert_eq!(data["check_out"], "2027-03-15");
        assert_eq!(data["stars"], 3);
        r.answer = Some(("the blue one".into(), Map::new()));
        assert!(
            matches!(Hotels.handle(&r), Reply::Ask { question, .. } if question.starts_with("I did not understand"))
        );
    }

    #[test]
    fn activities_come_from_the_interests_and_the_same_request_gets_the_same_answer() {
        let r = request(json!({"city": "Tokyo", "interests": "['food', 'temples']", "days": 5}));
        let a = Activities.handle(&r);
        assert_eq!(a, Activities.handle(&r));
        let Reply::Done { data, .. } = a else {
            panic!()
        };
        let names: Vec<&str> = data["activities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "Tokyo food and market tour",
                "Tokyo temples circuit",
                "Sunset boat trip in Tokyo"
            ]
        );
    }

    #[test]
    fn currency_converts_to_the_local_currency() {
        let r = request(json!({"amount": "3000", "from": "EUR", "city": "Tokyo"}));
        let Reply::Done { data, .. } = Currency.handle(&r) else {
            panic!()
        };
        assert_eq!(data["to"], "JPY");
        assert_eq!(data["converted"], 486000.0);
    }
}
