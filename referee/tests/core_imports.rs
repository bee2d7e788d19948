//! The referee's module graph, read from its sources: its core (every top-level module
//! but `cli`) imports without circles, and no module of the core imports the commands
//! (`cli`, which stand on the core). ARCHITECTURE.md states both as invariants.
//!
//! A module's imports are the `crate::NAME` paths of its files (those of a directory
//! module's files included), comments and `#[cfg(test)]` modules left out; a `NAME`
//! that is not a module is looked up in lib.rs's `pub use`s. A path this test cannot
//! resolve fails it, so no import escapes the check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module and the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The module of the commands, which nothing of the core may import.
const COMMANDS: &str = "cli";

/// A file's code without its comments and without its test modules: a top-level
/// `#[cfg(test)] mod NAME {` up to its closing `}` at the start of a line (where
/// rustfmt, which CI runs, puts it).
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "#[cfg(test)]" && lines.peek().is_some_and(|next| next.starts_with("mod ")) {
            for skipped in lines.by_ref() {
                if skipped == "}" {
                    break;
                }
            }
            continue;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifier at the start of `text` (after spaces).
fn ident(text: &str) -> &str {
    let text = text.trim_start();
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    &text[..end]
}

/// The first names of the paths of a `{a, b::c, d as e}` group: `text` starts after its
/// `{`.
fn group_heads(text: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut start = true;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => start = true,
            _ if start && is_ident(c) && depth == 0 => {
                heads.push(ident(&text[i..]).to_string());
                start = false;
            }
            _ => {}
        }
    }
    heads
}

/// The names lib.rs re-exports, each with the module it comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let code = code_of(lib);
    for statement in code.split(';') {
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let path = statement[at + "pub use ".len()..].trim();
        let path = path.strip_prefix("crate::").unwrap_or(path);
        let module = ident(path).to_string();
        let exported: Vec<String> = match path.find('{') {
            Some(open) => path[open + 1..]
                .split(',')
                .filter_map(|item| item.split_whitespace().last())
                .map(|name| name.trim_end_matches('}').to_string())
                .filter(|name| !name.is_empty())
                .collect(),
            None => path
                .split_whitespace()
                .last()
                .map(|last| last.rsplit("::").next().unwrap_or(last).to_string())
                .into_iter()
                .collect(),
        };
        for name in exported {
            names.insert(name, module.clone());
        }
    }
    names
}

/// The modules `code` imports (`crate::` paths), resolved through `modules` and the
/// crate root's re-exports; an error names a path that is neither.
fn imports(
    code: &str,
    modules: &BTreeSet<String>,
    reexported: &BTreeMap<String, String>,
) -> Result<BTreeSet<String>, String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| is_ident(c) || c == '$') {
            continue; // `$crate::` or a name ending in `crate`
        }
        let heads = match rest.trim_start().strip_prefix('{') {
            Some(group) => group_heads(group),
            None => vec![ident(rest).to_string()],
        };
        for head in heads {
            let module = if modules.contains(&head) {
                head
            } else if let Some(module) = reexported.get(&head) {
                module.clone()
            } else {
                return Err(format!("crate::{head} is neither a module nor re-exported"));
            };
            found.insert(module);
        }
    }
    Ok(found)
}

/// The referee's top-level modules, each with the code of its files.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn gather(dir: &Path, out: &mut String) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("a module directory")
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                gather(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push_str(&code_of(
                    &std::fs::read_to_string(&path).expect("a source file"),
                ));
            }
        }
    }
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("referee/src") {
        let path = entry.expect("a directory entry").path();
        let mut code = String::new();
        let name = if path.is_dir() {
            gather(&path, &mut code);
            path.file_name()
        } else if path.extension().is_some_and(|e| e == "rs") {
            code = code_of(&std::fs::read_to_string(&path).expect("a source file"));
            path.file_stem()
        } else {
            continue;
        };
        let name = name.expect("a name").to_string_lossy().into_owned();
        if name != "lib" {
            modules.insert(name, code);
        }
    }
    modules
}

/// The graph of `modules` (name, code), its self-imports left out.
fn graph(
    modules: &BTreeMap<String, String>,
    reexported: &BTreeMap<String, String>,
) -> Result<Graph, String> {
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    let mut graph = Graph::new();
    for (name, code) in modules {
        let mut used = imports(code, &names, reexported).map_err(|e| format!("{name}: {e}"))?;
        used.remove(name);
        graph.insert(name.clone(), used);
    }
    Ok(graph)
}

/// A circle of imports, as the modules along it (the first again at the end), if
/// there is one.
fn circle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The modules other than `commands` that import it.
fn importers_of(graph: &Graph, commands: &str) -> Vec<String> {
    graph
        .iter()
        .filter(|(name, used)| name.as_str() != commands && used.contains(commands))
        .map(|(name, _)| name.clone())
        .collect()
}

fn referee_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    graph(&modules(&src), &reexports(&lib)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_core_imports_without_circles_and_never_the_commands() {
    let graph = referee_graph();
    // The reading finds the imports there are: a graph of no edges would pass anything.
    assert!(graph["set"].contains("config"), "{graph:?}");
    assert!(graph["cli"].contains("set"), "{graph:?}");
    assert!(graph["limits"].contains("sandbox"), "{graph:?}");
    assert_eq!(circle(&graph), None, "{graph:#?}");
    assert_eq!(importers_of(&graph, COMMANDS), Vec::<String>::new());
}

fn made_up(edges: &[(&str, &[&str])]) -> Graph {
    edges
        .iter()
        .map(|(from, to)| (from.to_string(), to.iter().map(|t| t.to_string()).collect()))
        .collect()
}

#[test]
fn a_circle_and_an_import_of_the_commands_are_found_in_a_made_up_graph() {
    let acyclic = made_up(&[
        ("a", &["b", "c"]),
        ("b", &["c"]),
        ("c", &[]),
        ("cli", &["a"]),
    ]);
    assert_eq!(circle(&acyclic), None);
    assert_eq!(importers_of(&acyclic, "cli"), Vec::<String>::new());

    let circled = made_up(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &[])]);
    assert_eq!(
        circle(&circled),
        Some(["a", "b", "c", "a"].map(String::from).to_vec())
    );
    let two = made_up(&[("config", &["set"]), ("set", &["config"])]);
    assert_eq!(
        circle(&two),
        Some(["config", "set", "config"].map(String::from).to_vec())
    );

    let upward = made_up(&[("a", &["cli"]), ("b", &[]), ("cli", &["b"])]);
    assert_eq!(circle(&upward), None);
    assert_eq!(importers_of(&upward, "cli"), vec!["a".to_string()]);
}

#[test]
fn imports_are_read_from_paths_groups_and_reexports_not_from_comments_or_tests() {
    let lib = "mod a;\npub use a::{Alpha, beta as gamma};\npub use b::Bee;\n\
               pub mod inner {\n    pub use crate::c::deep::Sea;\n}\n";
    let reexported = reexports(lib);
    assert_eq!(
        reexported,
        [("Alpha", "a"), ("gamma", "a"), ("Bee", "b"), ("Sea", "c")]
            .map(|(n, m)| (n.to_string(), m.to_string()))
            .into_iter()
            .collect()
    );
    let sources: BTreeMap<String, String> = [
        (
            "a",
            "use crate::b::x;\nfn f() { crate::Sea::new(); }\n// crate::d::y\n\
             #[cfg(test)]\nmod tests {\n    use crate::d::z;\n    fn g() {\n    }\n}\n\
             fn after_the_tests() { crate::b::y(); }\n",
        ),
        ("b", "use crate::{c::One, d};\nlet s = \"$crate::a\";\n"),
        ("c", "use crate::Bee;\n"),
        ("d", ""),
    ]
    .map(|(n, code)| (n.to_string(), code_of(code)))
    .into_iter()
    .collect();
    let graph = graph(&sources, &reexported).expect("a graph");
    assert_eq!(
        graph,
        made_up(&[
            ("a", &["b", "c"]),
            ("b", &["c", "d"]),
            ("c", &["b"]),
            ("d", &[])
        ])
    );
    assert_eq!(
        circle(&graph),
        Some(["b", "c", "b"].map(String::from).to_vec())
    );

    let unknown: BTreeMap<String, String> = [("a".to_string(), "crate::Nothing".to_string())]
        .into_iter()
        .collect();
    assert_eq!(
        graph_error(&unknown, &reexported),
        "a: crate::Nothing is neither a module nor re-exported"
    );
}

fn graph_error(
    modules: &BTreeMap<String, String>,
    reexported: &BTreeMap<String, String>,
) -> String {
    match graph(modules, reexported) {
        Ok(g) => panic!("a graph: {g:?}"),
        Err(e) => e,
    }
}
