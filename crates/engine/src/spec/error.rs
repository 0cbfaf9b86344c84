//! [`SpecError`]: a run spec the engine refuses, in the spec's own field names.

/// A run spec the engine refuses: the field at fault, the field it conflicts with (if any)
/// and why, in the spec's own terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The field at fault (`threads`, `state.cold`, …).
    pub field: &'static str,
    /// The field it conflicts with.
    pub with: Option<&'static str>,
    /// Why, naming values, never flags.
    pub why: String,
}

impl SpecError {
    /// A bad value of `field`.
    pub fn field(field: &'static str, why: impl Into<String>) -> Self {
        Self {
            field,
            with: None,
            why: why.into(),
        }
    }

    /// `field` cannot be combined with `with` as given.
    pub fn conflict(field: &'static str, with: &'static str, why: impl Into<String>) -> Self {
        Self {
            field,
            with: Some(with),
            why: why.into(),
        }
    }

    /// The error with its fields named by `name` (a front end's flags).
    pub fn render(&self, name: impl Fn(&'static str) -> String) -> String {
        match self.with {
            Some(with) => format!("{} with {}: {}", name(self.field), name(with), self.why),
            None => format!("{}: {}", name(self.field), self.why),
        }
    }
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(|field| format!("`{field}`")))
    }
}

impl std::error::Error for SpecError {}
