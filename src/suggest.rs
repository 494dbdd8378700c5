//! Did-you-mean: the known words nearest to one that is not known, for the messages of the
//! config, the schema loaders, the validator, the families and the CLI alike.

/// Up to three known words closest to `word`, nearest first, for did-you-mean messages.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word_lower = word.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&word_lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// `; did you mean "X"?`, X the known word nearest to `word`, to end a message that names an
/// unknown word; empty when no known word is near.
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).first().map(|n| format!("; did you mean \"{n}\"?")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_offers_nothing_for_unrelated_words() {
        assert!(closest("zzzzzz", ["replicas", "image"]).is_empty());
        assert_eq!(hint("zzzzzz", ["replicas", "image"]), "");
        assert_eq!(hint("replcas", ["image", "replicas"]), "; did you mean \"replicas\"?");
    }

    #[test]
    fn closest_ranks_the_nearest_first_and_offers_at_most_three() {
        let near = closest("replcas", ["replicas", "replica", "resources", "image", "replicaSet"]);
        assert_eq!(near.first(), Some(&"replicas"));
        assert!(near.len() <= 3, "{near:?}");
    }
}
