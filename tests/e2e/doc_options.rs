//! Every option of every command is documented, and every documented option is real:
//! `hus COMMAND --help` of the binary under test against the command's table in
//! docs/cli.md, both ways, with the defaults, the environment variables, the listed
//! values and the usage line; and every option named in any other option table of the
//! documents is one the command of its section takes.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use crate::common::*;
use crate::doc_support::*;

/// One option as `--help` shows it.
#[derive(Debug, Default)]
struct HelpOption {
    /// `[default: X]`.
    default: Option<String>,
    /// `[env: NAME]`.
    env: Option<String>,
    /// The values it lists (`Possible values:` or `[possible values: ...]`).
    values: Vec<String>,
}

/// What `hus COMMAND --help` says.
struct Help {
    usage: String,
    options: BTreeMap<String, HelpOption>,
}

/// `--help` and `--version`, which every command takes and the tables leave out.
const EVERY_COMMAND: [&str; 2] = ["--help", "--version"];

fn help_text(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hus"))
        .args(args)
        // The help shows a set variable's value; the tests' own environment stays out.
        .env_remove("HUS_STORE")
        .output()
        .expect("hus runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "hus {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the help is UTF-8")
}

/// The commands `hus --help` lists (without `help`).
fn listed_commands() -> Vec<String> {
    let text = help_text(&["--help"]);
    let commands = text
        .split("\nCommands:\n")
        .nth(1)
        .expect("hus --help lists its commands");
    commands
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The long name of an option line of `--help` (`  -h, --help  Print help`, or
/// `      --rules <RULES>`), or `None` for any other line. Option lines are indented 2
/// or 6 spaces; the lines of a long description, 10.
fn option_name(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start().len();
    let rest = line.trim_start();
    if !(indent == 2 || indent == 6) || !rest.starts_with('-') {
        return None;
    }
    let at = rest.find("--")?;
    let name: String = rest[at + 2..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    Some(format!("--{name}"))
}

/// The text between `[key: ` and the next `]` of `block`.
fn bracketed<'a>(block: &'a str, key: &str) -> Option<&'a str> {
    let start = block.find(&format!("[{key}: "))? + key.len() + 3;
    let len = block[start..].find(']')?;
    Some(&block[start..start + len])
}

fn parse_help(command: &str) -> Help {
    let text = help_text(&[command, "--help"]);
    let usage = text
        .lines()
        .find_map(|l| l.strip_prefix("Usage: "))
        .unwrap_or_else(|| panic!("hus {command} --help has no usage line"))
        .to_string();
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = option_name(line) {
            blocks.push((name, format!("{line}\n")));
        } else if line.starts_with(' ') || line.is_empty() {
            if let Some((_, block)) = blocks.last_mut() {
                block.push_str(line);
                block.push('\n');
            }
        } else if let Some((_, block)) = blocks.last_mut() {
            // A heading (`Sandbox:`) ends the block before it.
            block.push('\u{0}');
        }
    }
    let mut options = BTreeMap::new();
    for (name, block) in blocks {
        let block = block.split('\u{0}').next().unwrap_or_default();
        let mut values: Vec<String> = Vec::new();
        if let Some(list) = bracketed(block, "possible values") {
            values.extend(list.split(", ").map(str::to_string));
        }
        if let Some(list) = block.split("Possible values:\n").nth(1) {
            values.extend(
                list.lines()
                    .filter_map(|l| l.trim().strip_prefix("- "))
                    .filter_map(|v| v.split(':').next())
                    .map(str::to_string),
            );
        }
        let option = HelpOption {
            default: bracketed(block, "default").map(str::to_string),
            env: bracketed(block, "env").map(|e| e.split('=').next().unwrap_or(e).to_string()),
            values,
        };
        assert!(
            options.insert(name.clone(), option).is_none(),
            "hus {command} --help shows {name} twice"
        );
    }
    Help { usage, options }
}

/// The options a row of a table names: the backticked words of its first cell that
/// start with `--`, each up to its first space (`--rules PRESET` names `--rules`).
fn row_options(row: &Row) -> Vec<String> {
    row.names
        .iter()
        .filter(|n| n.starts_with("--"))
        .map(|n| n.split([' ', '=', '[']).next().unwrap_or(n).to_string())
        .collect()
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.insert(anchor(line));
        }
    }
    out
}

#[test]
fn every_option_of_every_command_is_in_its_table() {
    let cli = doc("docs/cli.md");
    let documented: Vec<String> = named_headings(&cli, 2)
        .into_iter()
        .map(|h| {
            h.strip_prefix("hus ")
                .unwrap_or_else(|| panic!("docs/cli.md: heading `{h}` is not `hus COMMAND`"))
                .to_string()
        })
        .collect();
    let listed = listed_commands();
    assert!(listed.len() >= 15, "hus --help lists {listed:?}");
    let missing: Vec<&String> = listed.iter().filter(|c| !documented.contains(c)).collect();
    assert!(
        missing.is_empty(),
        "docs/cli.md has no section for {missing:?}"
    );
    let mut failures = Vec::new();
    for command in &documented {
        // A command `hus --help` does not list (`random-bot`) must still be one.
        let help = parse_help(command);
        for every in EVERY_COMMAND {
            assert!(
                help.options.contains_key(every),
                "hus {command} --help: no {every}"
            );
        }
        let text = section(&cli, &format!("## `hus {command}`"));
        let usage = code_blocks(text)
            .into_iter()
            .next()
            .map(|(_, _, body)| body.trim().to_string());
        if usage.as_deref() != Some(help.usage.as_str()) {
            failures.push(format!(
                "hus {command}: the usage line is {:?} in docs/cli.md, {:?} in --help",
                usage, help.usage
            ));
        }
        let rows = table_rows(text, "option");
        let mut seen = BTreeSet::new();
        for row in &rows {
            let names = row_options(row);
            if names.is_empty() {
                failures.push(format!(
                    "hus {command}: a row names no option: {:?}",
                    row.cells
                ));
            }
            for name in names {
                if !seen.insert(name.clone()) {
                    failures.push(format!("hus {command}: {name} has two rows"));
                }
                let Some(option) = help.options.get(&name) else {
                    failures.push(format!(
                        "hus {command}: docs/cli.md documents {name}, which the program does not take"
                    ));
                    continue;
                };
                let default_cell = row.cells.get(1).map(String::as_str).unwrap_or_default();
                if let Some(default) = &option.default {
                    if default_cell != format!("`{default}`") {
                        failures.push(format!(
                            "hus {command} {name}: the default is `{default}` (--help), {default_cell:?} in docs/cli.md"
                        ));
                    }
                }
                let env_cell = default_cell
                    .split('`')
                    .find_map(|w| w.strip_prefix('$'))
                    .map(str::to_string);
                if env_cell != option.env {
                    failures.push(format!(
                        "hus {command} {name}: reads the variable {:?} (--help), {env_cell:?} in docs/cli.md",
                        option.env
                    ));
                }
                let whole = row.cells.join(" | ");
                for value in &option.values {
                    if !whole.contains(&format!("`{value}`")) {
                        failures.push(format!(
                            "hus {command} {name}: takes the value {value}, which its row does not name"
                        ));
                    }
                }
                // And the other way: a row of an option with listed values names no
                // value it does not take (a backticked bare word, `csv`; a backticked
                // example of output, `{"workers": [...]}`, is not a value).
                if !option.values.is_empty() {
                    let meaning = row.cells.get(2).map(String::as_str).unwrap_or_default();
                    let bare = |w: &String| {
                        w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                            && w.chars()
                                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                    };
                    for word in backticked(meaning).into_iter().filter(bare) {
                        if !option.values.contains(&word) {
                            failures.push(format!(
                                "hus {command} {name}: its row names the value {word}, which --help does not list"
                            ));
                        }
                    }
                }
            }
        }
        for name in help.options.keys() {
            if !seen.contains(name) && !EVERY_COMMAND.contains(&name.as_str()) {
                failures.push(format!(
                    "hus {command}: {name} is in --help but has no row in docs/cli.md"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The option tables elsewhere (README's for `hus match` and `hus rate`, its sandbox
/// table...) name only options that exist: each one an option of the command its
/// section is about (the nearest heading naming `hus COMMAND`), or of some command when
/// no heading names one.
#[test]
fn every_option_of_the_other_tables_is_real() {
    let mut commands = listed_commands();
    commands.push("random-bot".into());
    let helps: BTreeMap<String, Help> = commands
        .iter()
        .map(|c| (c.clone(), parse_help(c)))
        .collect();
    let mut docs = vec!["README.md".to_string()];
    let mut more: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok())
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|n| n.ends_with(".md") && n != "docs/cli.md")
        .collect();
    more.sort();
    docs.extend(more);
    let mut failures = Vec::new();
    let mut checked = 0;
    for name in &docs {
        let text = doc(name);
        // Headings above the current line, by level.
        let mut headings: Vec<(usize, String)> = Vec::new();
        let mut fenced = false;
        let mut in_table = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            let level = line.chars().take_while(|&c| c == '#').count();
            if level > 0 && line[level..].starts_with(' ') {
                headings.retain(|(l, _)| *l < level);
                headings.push((level, line.to_string()));
                continue;
            }
            let trimmed = line.trim();
            if !trimmed.starts_with('|') {
                in_table = false;
                continue;
            }
            let cells = table_cells(trimmed);
            let first = cells.first().map(String::as_str).unwrap_or("");
            if first == "option" {
                in_table = true;
                continue;
            }
            if !in_table {
                continue;
            }
            let row = Row {
                names: backticked(first),
                cells: vec![first.to_string()],
            };
            let about = headings
                .iter()
                .rev()
                .find_map(|(_, h)| commands.iter().find(|c| h.contains(&format!("`hus {c}`"))));
            for option in row_options(&row) {
                checked += 1;
                let real = match about {
                    Some(c) => helps[c].options.contains_key(&option),
                    None => helps.values().any(|h| h.options.contains_key(&option)),
                };
                if !real {
                    failures.push(format!(
                        "{name}: {option} (under {:?}) is not an option of {}",
                        headings.last().map(|(_, h)| h.as_str()).unwrap_or(""),
                        about.map_or("any command".to_string(), |c| format!("hus {c}"))
                    ));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} options in other tables");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// docs/cli.md's links lead somewhere: the file exists and has the heading.
#[test]
fn the_links_of_the_option_tables_resolve() {
    let cli = doc("docs/cli.md");
    let mut checked = 0;
    for piece in cli.split("](").skip(1) {
        let target = piece.split(')').next().unwrap_or_default();
        if target.starts_with("http") {
            continue;
        }
        let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
        let path = if file.is_empty() {
            "docs/cli.md".to_string()
        } else {
            let joined = root().join("docs").join(file);
            let joined = joined
                .canonicalize()
                .unwrap_or_else(|e| panic!("docs/cli.md links to {target}: {e}"));
            joined
                .strip_prefix(root().canonicalize().expect("root"))
                .expect("inside the repository")
                .display()
                .to_string()
        };
        if !fragment.is_empty() {
            let heads = anchors(&doc(&path));
            assert!(
                heads.contains(fragment),
                "docs/cli.md links to {target}: {path} has no heading #{fragment}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} links");
}

/// docs/server.md opens with the usage of `hus serve`, written out: it names every
/// option of the command and no other (it lacked `--quiet`).
#[test]
fn the_usage_of_hus_serve_in_server_md_names_every_option() {
    let text = doc("docs/server.md");
    let start = text.find("`hus serve LEAGUE.toml").expect("the usage line");
    let usage = text[start + 1..].split('`').next().unwrap_or_default();
    let written: BTreeSet<String> = usage
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']')
        .filter(|w| w.starts_with("--"))
        .map(str::to_string)
        .collect();
    let help = parse_help("serve");
    let taken: BTreeSet<String> = help
        .options
        .keys()
        .filter(|o| !EVERY_COMMAND.contains(&o.as_str()))
        .cloned()
        .collect();
    assert_eq!(
        written, taken,
        "docs/server.md's usage of hus serve against --help"
    );
}
