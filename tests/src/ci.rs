//! What the tests do differently under CI (`CI=true`): a test that needs a tool CI installs fails
//! instead of skipping when the tool is missing, and golden re-blessing is refused.
//!
//! The decisions are plain functions of the environment values, so they are unit-tested without
//! changing the environment of the test process.

use std::ffi::OsStr;

/// Whether the value of `CI` marks a CI run.
///
/// CI services set `CI=true` (some `CI=1`); an unset, empty, `0` or `false` value is an ordinary
/// run, so a developer who exports `CI=false` is not treated as CI.
pub fn is_ci(ci: Option<&OsStr>) -> bool {
    match ci.and_then(OsStr::to_str) {
        None => ci.is_some(),
        Some(v) => !matches!(v.trim().to_ascii_lowercase().as_str(), "" | "0" | "false"),
    }
}

/// What a test does when a tool it needs (such as `/usr/bin/chromium`) is missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WhenMissing {
    /// Outside CI: print the message and pass, so a machine without the tool can still run the suite.
    Skip(String),
    /// Under CI: fail with the message, because CI installs the tool and a skip there would hide
    /// that the test never ran.
    Fail(String),
}

/// Decides skip or fail for the missing `tool`, needed by the test `what`, from the value of `CI`.
pub fn when_missing(tool: &str, what: &str, ci: Option<&OsStr>) -> WhenMissing {
    if is_ci(ci) {
        WhenMissing::Fail(format!("{tool} is missing, and under CI=true {what} must run, not skip (.ci/run installs it)"))
    } else {
        WhenMissing::Skip(format!("skipped: {tool} is missing, so {what} did not run (CI installs it and fails without it)"))
    }
}

/// Whether to re-bless the golden files, from the values of `PHALANX_BLESS` and `CI`.
///
/// Re-blessing rewrites the expectations a test compares against, so under CI it would make the
/// test pass whatever the code does; it is refused there with an error saying so.
///
/// # Errors
/// When `PHALANX_BLESS` is set under CI.
pub fn bless_requested(bless: Option<&OsStr>, ci: Option<&OsStr>) -> Result<bool, String> {
    match (bless.is_some(), is_ci(ci)) {
        (true, true) => Err("PHALANX_BLESS is refused under CI=true: re-blessing would rewrite the golden files the test \
                             checks; re-bless on a development machine and commit the result"
            .to_owned()),
        (requested, _) => Ok(requested),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn ci_values() {
        for on in ["true", "TRUE", "1", "yes", "github"] {
            assert!(is_ci(v(on)), "{on}");
        }
        for off in ["", "0", "false", "False", " false "] {
            assert!(!is_ci(v(off)), "{off:?}");
        }
        assert!(!is_ci(None));
    }

    /// Regression: the headless-Chromium viewer test passed under `CI=true` when `/usr/bin/chromium`
    /// was missing, printing only "skipped", so a CI machine whose Chromium install failed reported
    /// the viewer page as tested. Under CI a missing tool must now fail the test; elsewhere it skips.
    #[test]
    fn chromium_missing_under_ci_passed_as_skipped() {
        let tool = "/usr/bin/chromium";
        let what = "the viewer's browser test";
        match when_missing(tool, what, v("true")) {
            WhenMissing::Fail(message) => assert!(message.contains(tool) && message.contains("CI=true"), "{message}"),
            other => panic!("under CI=true a missing tool must fail, got {other:?}"),
        }
        assert!(matches!(when_missing(tool, what, None), WhenMissing::Skip(m) if m.starts_with("skipped: ") && m.contains(tool)));
        assert!(matches!(when_missing(tool, what, v("false")), WhenMissing::Skip(_)));
    }

    /// Regression: `PHALANX_BLESS=1` was honoured under `CI=true`, so a CI run with it set rewrote the
    /// golden replays and hashes and then compared against what it had just written, passing
    /// whatever the simulation did. Under CI it must now be an error naming the variable.
    #[test]
    fn phalanx_bless_was_honoured_under_ci() {
        let refused = bless_requested(v("1"), v("true")).unwrap_err();
        assert!(refused.contains("PHALANX_BLESS") && refused.contains("CI=true"), "{refused}");
        assert_eq!(bless_requested(v("1"), None), Ok(true));
        assert_eq!(bless_requested(v("1"), v("0")), Ok(true));
        assert_eq!(bless_requested(None, v("true")), Ok(false));
        assert_eq!(bless_requested(None, None), Ok(false));
    }
}
