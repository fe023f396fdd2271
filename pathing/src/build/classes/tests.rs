//! Unit tests of the passability class files: the defaults, reading and writing, the error
//! messages, and the format description in `docs/` against the code.

use super::*;

/// Parses a class file; the only caller of the reader in these tests.
#[track_caller]
fn check(text: &str) -> Result<ClassSet, ClassFileError> {
    let res = ClassSet::parse_json(text);
    if let Ok(set) = &res {
        // Whatever parses also writes back to an equal set.
        assert_eq!(ClassSet::parse_json(&set.to_json()).as_ref(), Ok(set), "{}", set.to_json());
    }
    res
}

fn class(name: &str, body: &str) -> String {
    format!(r#"{{"name": "{name}", "obstructions": "pathfinding"{body}}}"#)
}

fn file(classes: &[String]) -> String {
    format!("{{\"classes\": [\n{}\n]}}", classes.join(",\n"))
}

#[test]
fn the_defaults_are_valid_and_round_trip() {
    let defaults = ClassSet::zero_ad_defaults();
    assert_eq!(ClassSet::new(defaults.defs().to_vec()).as_ref(), Ok(&defaults));
    assert_eq!(defaults.len(), 8);
    let text = defaults.to_json();
    assert_eq!(check(&text), Ok(defaults.clone()));
    assert_eq!(defaults.by_name("ship"), Ok(PassClass::new(2).unwrap()));
    assert_eq!(defaults.by_name("boat"), Err(ClassFileError::UnknownClass { name: "boat".to_string() }));
    assert_eq!(defaults.class_bits(), 0xff);
    assert_eq!(defaults.obstruction_bits(ObstructionMode::Pathfinding), 0b1111);
    assert_eq!(defaults.obstruction_bits(ObstructionMode::Foundation), 0b11_0000);
    assert_eq!(defaults.obstruction_bits(ObstructionMode::None), 0b1100_0000);
    assert_eq!(defaults.max_clearance(), metres(10));
    let building_shore = defaults.get(PassClass::new(5).unwrap()).unwrap();
    assert_eq!(building_shore.max_slope.unwrap().to_bits(), 5 << 14);
    assert_eq!(defaults.get(PassClass::new(8).unwrap()), None);
}

/// `docs/passability-classes.md` shows the built-in set as `to_json` writes it, and every JSON
/// example in it is a valid class file.
#[test]
fn the_format_description_matches_the_code() {
    let doc = include_str!("../../../../docs/passability-classes.md");
    assert!(doc.contains(&ClassSet::zero_ad_defaults().to_json()), "the built-in set in the doc is stale");
    let blocks: Vec<&str> = doc.split("```json\n").skip(1).map(|rest| rest.split("```").next().unwrap_or("")).collect();
    assert_eq!(blocks.len(), 2);
    for block in blocks {
        check(block).unwrap();
    }
}

#[test]
fn to_json_writes_one_class_per_line() {
    let set = ClassSet::zero_ad_defaults();
    let text = set.to_json();
    let first = text.lines().nth(2).unwrap();
    assert_eq!(
        first,
        r#"    {"name": "default", "clearance": 1, "shape": "square", "maxSlope": 1, "maxWaterDepth": 2, "obstructions": "pathfinding"},"#
    );
    assert!(text.contains(r#""maxSlope": 1.25, "maxShoreDistance": 8, "obstructions": "foundation"}"#), "{text}");
}

#[test]
fn fields_default_and_numbers_are_exact() {
    let set = check(&file(&[
        class("a", ""),
        class("b", r#", "clearance": 0.45, "shape": "round", "minWaterDepth": -1.5, "maxWaterDepth": -1.5, "maxShoreDistance": 0"#),
    ]))
    .unwrap();
    let a = &set.defs()[0];
    assert_eq!(a, &ClassDef::unbounded("a", ObstructionMode::Pathfinding));
    let b = &set.defs()[1];
    assert_eq!(b.clearance.to_bits(), 29491);
    assert_eq!(b.clearance_shape, ClearanceShape::Round);
    assert_eq!(b.min_water_depth, Some(Fixed::from_num(-3) / 2));
    assert_eq!(b.max_shore_distance, Some(Fixed::ZERO));
    // ceil(0.45 / 0.25) = 2, ceil(0.45 / 0.45) = 1 exactly, a tiny navcell saturates nothing.
    assert_eq!(b.clearance_cells(Fixed::from_num(1) / 4), 2);
    assert_eq!(b.clearance_cells(b.clearance), 1);
    assert_eq!(b.clearance_cells(Fixed::ZERO), 29491);
    assert_eq!(a.clearance_cells(Fixed::ONE), 0);
}

#[test]
fn rule_errors_name_the_rule_and_where_the_class_starts() {
    let cases: Vec<(String, ClassProblem, usize)> = vec![
        (file(&[class("a", ""), class("a", "")]), ClassProblem::DuplicateName { name: "a".into() }, 3),
        (file(&[class("", "")]), ClassProblem::EmptyName { index: 0 }, 2),
        (file(&[class("a", r#", "clearance": -1"#)]), ClassProblem::BadClearance { name: "a".into(), clearance: metres(-1) }, 2),
        (file(&[class("a", r#", "clearance": 65"#)]), ClassProblem::BadClearance { name: "a".into(), clearance: metres(65) }, 2),
        (file(&[class("a", r#", "maxSlope": -0.5"#)]), ClassProblem::BadSlope { name: "a".into(), max_slope: Fixed::from_num(-1) / 2 }, 2),
        (
            file(&[class("a", r#", "minWaterDepth": 2, "maxWaterDepth": 1"#)]),
            ClassProblem::EmptyRange { name: "a".into(), field: "minWaterDepth", min: metres(2), max: metres(1) },
            2,
        ),
        (
            file(&[class("a", r#", "minShoreDistance": 9, "maxShoreDistance": 8"#)]),
            ClassProblem::EmptyRange { name: "a".into(), field: "minShoreDistance", min: metres(9), max: metres(8) },
            2,
        ),
        (file(&[]), ClassProblem::NoClasses, 3),
        (file(&(0..17).map(|k| class(&format!("c{k}"), "")).collect::<Vec<_>>()), ClassProblem::TooManyClasses { index: 16 }, 18),
    ];
    for (text, problem, line) in cases {
        let err = check(&text).unwrap_err();
        let ClassFileError::Invalid { at: Some(at), path, problem: found } = &err else { panic!("{text}: {err:?}") };
        assert_eq!(found, &problem, "{text}");
        assert_eq!(at.line, line, "{text}: {err}");
        // Each class of `file` starts a line, and so does the `]` that closes an empty list.
        assert_eq!(at.column, 1, "{text}: {err}");
        let message = err.to_string();
        // The JSON path names the class (the list itself when it is empty).
        let expected_path = match &problem {
            ClassProblem::NoClasses => "classes".to_string(),
            ClassProblem::DuplicateName { .. } => "classes[1]".to_string(),
            ClassProblem::TooManyClasses { index } => format!("classes[{index}]"),
            _ => "classes[0]".to_string(),
        };
        assert_eq!(path, &expected_path, "{text}: {err}");
        assert!(message.starts_with(&format!("{line}:{}: at {expected_path}: expected", at.column)), "{message}");
    }
}

#[test]
fn syntax_errors_say_what_was_expected_where() {
    let cases = [
        (file(&[class("a", r#", "colour": 1"#)]), 2, "unknown field `colour`, expected one of"),
        (file(&[class("a", r#", "shape": "hexagon""#)]), 2, "unknown variant `hexagon`, expected `square` or `round`"),
        (file(&[r#"{"name": "a"}"#.to_string()]), 2, "missing field `obstructions`"),
        (file(&[class("a", r#", "maxSlope": null"#)]), 2, "expected"),
        (file(&[class("a", r#", "maxSlope": 1e3"#)]), 2, "expected a decimal number"),
        (file(&[class("a", r#", "clearance": 99999"#)]), 2, "expected a number within"),
        ("{\"classes\": [], \"version\": 2}".to_string(), 1, "unknown field `version`"),
        ("{\"classes\": [\n{\"name\": 3}]}".to_string(), 2, "invalid type: integer `3`, expected a string"),
        ("[1, 2".to_string(), 1, "invalid type"),
        ("{\"classes\": [".to_string(), 1, "EOF"),
    ];
    for (text, line, expected) in cases {
        let err = check(&text).unwrap_err();
        let ClassFileError::Syntax(JsonError { line: found_line, column, message, .. }) = &err else { panic!("{text}: {err:?}") };
        assert_eq!(*found_line, line, "{text}: {err}");
        assert!(*column >= 1);
        assert!(message.contains(expected), "{text}: {message}");
        assert!(!message.contains(" at line "), "the position is not repeated: {message}");
    }
}

#[test]
fn a_class_file_error_names_the_json_path() {
    let cases = [
        (file(&[class("a", ""), class("b", r#", "colour": 1"#)]), "classes[1].colour"),
        (file(&[class("a", r#", "maxSlope": 1e3"#)]), "classes[0].maxSlope"),
        ("{\"classes\": [\n{\"name\": 3}]}".to_string(), "classes[0].name"),
        ("{\"classes\": [], \"version\": 2}".to_string(), "version"),
        ("{\"classes\": [".to_string(), ""),
    ];
    for (text, path) in cases {
        let err = check(&text).unwrap_err();
        let ClassFileError::Syntax(json) = &err else { panic!("{text}: {err:?}") };
        assert_eq!(json.path, path, "{text}: {err}");
        let shown = err.to_string();
        let prefix = if path.is_empty() {
            format!("{}:{}: ", json.line, json.column)
        } else {
            format!("{}:{}: at {path}: ", json.line, json.column)
        };
        assert!(shown.starts_with(&prefix), "{shown}");
    }
}

#[test]
fn names_are_escaped_when_written() {
    let mut def = ClassDef::unbounded("odd \"name\" \\ \u{1}\n", ObstructionMode::None);
    def.max_slope = Some(Fixed::from_bits(1));
    def.min_shore_distance = Some(-WORLD_LIMIT);
    let set = ClassSet::new(vec![def]).unwrap();
    assert_eq!(check(&set.to_json()), Ok(set));
}

#[test]
fn programmatic_sets_are_checked_too() {
    let mut def = ClassDef::unbounded("a", ObstructionMode::None);
    def.max_water_depth = Some(WORLD_LIMIT + Fixed::from_bits(1));
    let err = ClassSet::new(vec![def]).unwrap_err();
    assert!(
        matches!(err, ClassFileError::Invalid { at: None, problem: ClassProblem::OutOfRange { field: "maxWaterDepth", .. }, .. }),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("expected maxWaterDepth within"), "{err}");
    assert_eq!(
        ClassSet::new(Vec::new()).unwrap_err(),
        ClassFileError::Invalid { at: None, path: String::new(), problem: ClassProblem::NoClasses }
    );
}
