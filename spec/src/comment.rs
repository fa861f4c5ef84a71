//! Reads the facts the spec states in prose inside proto comments.
//!
//! The wording varies between releases ("This field is REQUIRED", "This is a REQUIRED
//! field", "REQUIRED for idempotency", a bare trailing "OPTIONAL" in v0.1.0), so matching is
//! done on whitespace-normalised text with a short list of phrasings, each seen in the corpus.

/// Cleans a comment from protobuf source info: one leading space per line dropped, lines
/// trimmed at the end, surrounding blank lines removed.
pub fn clean_comment(raw: &str) -> String {
    let lines: Vec<&str> =
        raw.lines().map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end()).collect();
    lines.join("\n").trim_matches('\n').to_owned()
}

/// Joins a comment's lines with single spaces.
pub fn normalise(comment: &str) -> String {
    comment.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a comment says about presence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PresenceWords {
    /// A REQUIRED phrasing was found; the byte offset in the normalised text.
    pub required: Option<usize>,
    /// An OPTIONAL phrasing was found; the byte offset in the normalised text.
    pub optional: Option<usize>,
}

/// Finds the presence statements of a field comment (already normalised).
pub fn presence_words(text: &str) -> PresenceWords {
    PresenceWords {
        required: find_keyword(text, "REQUIRED"),
        optional: find_keyword(text, "OPTIONAL"),
    }
}

/// Finds a statement that the field itself is `word`: "This field is WORD", "This is a(n) WORD
/// field", "field is WORD", or a sentence that starts with WORD.
fn find_keyword(text: &str, word: &str) -> Option<usize> {
    let article = if word.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
    let patterns = [
        format!("field is {word}"),
        format!("This is {article} {word} field"),
        format!("this is {article} {word} field"),
        format!("field is {article} {word} field"),
        // csi-addons writes the keyword in lowercase ("This field is optional.").
        format!("This field is {}", word.to_lowercase()),
    ];
    if let Some(pos) = patterns.iter().filter_map(|p| text.find(p.as_str())).min() {
        return Some(pos);
    }
    // A sentence that opens with the word: "OPTIONAL. It can be used ..." or "REQUIRED."
    let mut start = 0;
    for sentence in text.split_inclusive(". ") {
        let s = sentence.trim_start();
        if s.starts_with(word) && s[word.len()..].starts_with(['.', ' ', ':', ','].as_slice())
            || s == word
        {
            return Some(start + (sentence.len() - s.len()));
        }
        start += sentence.len();
    }
    None
}

/// True when a oneof's comment says one of its fields must be set.
pub fn oneof_required(text: &str) -> bool {
    let lower = text.to_lowercase();
    (lower.contains("one of") || lower.contains("exactly one"))
        && (text.contains("MUST be specified") || text.contains("MUST be set"))
        || text.contains("This field is REQUIRED")
}

/// A size statement in a field comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeWords {
    /// "SHALL NOT exceed N bytes".
    Max(u32),
    /// "The total size of this repeated field SHALL NOT exceed N".
    MaxTotal(u32),
    /// "overrides the general CSI size limit" with "at least N bytes".
    AtLeast(u32),
    /// "overrides the general CSI size limit" with no number.
    Lifted,
}

/// Finds a size override in a normalised comment.
pub fn size_words(text: &str) -> Option<SizeWords> {
    for marker in ["SHALL NOT exceed ", "MUST NOT exceed ", "not exceed "] {
        if let Some(pos) = text.find(marker)
            && let Some(n) = bytes_after(&text[pos + marker.len()..])
        {
            let sentence_start = text[..pos].rfind(". ").map_or(0, |i| i + 2);
            if text[sentence_start..pos].contains("total size") {
                return Some(SizeWords::MaxTotal(n));
            }
            return Some(SizeWords::Max(n));
        }
    }
    let overrides = text.contains("overrides the general CSI size limit")
        || text.contains("override the general CSI size limit");
    if overrides {
        if let Some(pos) = text.find("at least ")
            && let Some(n) = bytes_after(&text[pos + "at least ".len()..])
        {
            return Some(SizeWords::AtLeast(n));
        }
        return Some(SizeWords::Lifted);
    }
    None
}

/// Reads "N bytes" / "N byte" / "N KiB" at the start of `s`.
fn bytes_after(s: &str) -> Option<u32> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let n: u32 = digits.parse().ok()?;
    let unit = s[digits.len()..].trim_start();
    if unit.starts_with("byte") || unit.starts_with("B ") || unit.starts_with("B.") {
        Some(n)
    } else if unit.starts_with("KiB") || unit.starts_with("KB") {
        Some(n * 1024)
    } else {
        None
    }
}

/// True when the comment forbids negative values.
pub fn non_negative(text: &str) -> bool {
    text.contains("MUST NOT be negative") || text.contains("MUST NOT set negative")
}

/// True when the comment says the plugin makes the value for the CO to hand back in later calls:
/// an identifier "generated by the plugin" (`Volume.volume_id`), one the CO "SHALL" use "in
/// subsequent calls" (`NodeGetInfoResponse.node_id`, "the identifier of the node as understood by
/// the SP"), a token to use "as a value for" a field of the next request (`next_token`), or
/// opaque properties that "MUST be passed to" later calls (`volume_context`, `publish_context`).
/// Such a value differs from one run of a plugin to the next without being wrong.
pub fn plugin_generated(text: &str) -> bool {
    text.contains("generated by the plugin")
        || text.contains("used by the CO in subsequent calls")
        || text.contains("token") && text.contains("as a value for the")
        || text.contains("MUST be passed to")
}

/// True when the comment bans the spec's control characters.
pub fn no_control_chars(text: &str) -> bool {
    text.contains("U+0000")
}

/// The RPC a capability's comment (already normalised) says the capability stands for: "Indicates
/// the SP supports the `X` RPC" (v1.3.0 on, backticks or not), or "If Plugin implements
/// GET_VOLUME_STATS capability then it MUST implement X RPC" (v1.0.0 on). Only a word shaped like
/// an RPC name (capitalised, letters and digits) is taken: "Indicates the SP supports
/// ControllerPublishVolume.readonly field" names none.
pub fn capability_rpc(text: &str) -> Option<&str> {
    ["supports the ", "MUST implement "].iter().find_map(|lead| {
        text.match_indices(lead).find_map(|(at, _)| {
            let rest = &text[at + lead.len()..];
            let (word, after) = rest.split_once(' ')?;
            let name = word.trim_matches('`');
            let rpc_shaped = name.starts_with(|c: char| c.is_ascii_uppercase())
                && name.chars().all(|c| c.is_ascii_alphanumeric())
                && name.chars().any(|c| c.is_ascii_lowercase());
            (rpc_shaped && after.starts_with("RPC")).then_some(name)
        })
    })
}

/// What a capability's comment (already normalised) says it obliges besides: "The SP MUST also
/// support PUBLISH_UNPUBLISH_VOLUME." (v1.6.0 on), "A plugin which supports the
/// LIST_VOLUME_HEALTH capability MUST also support the GET_VOLUME_HEALTH capability." (v1.13.0).
/// Returns the capability the sentence names as the one that obliges, if it names one before
/// "MUST also support", and the one obliged.
pub fn capability_requires(text: &str) -> Option<(Option<&str>, &str)> {
    const PHRASE: &str = "MUST also support ";
    let at = text.find(PHRASE)?;
    let sentence_start = text[..at].rfind(". ").map_or(0, |i| i + 2);
    let subject = text[sentence_start..at]
        .split(' ')
        .map(|w| w.trim_matches('`'))
        .find(|w| capability_shaped(w));
    let rest = text[at + PHRASE.len()..].trim_start_matches("the ");
    let word = rest.split([' ', '.', ',']).next()?.trim_matches('`');
    capability_shaped(word).then_some((subject, word))
}

/// `CREATE_DELETE_VOLUME`-shaped: capitals, digits and underscores, a capital first, and an
/// underscore (so "SP" or "MUST" is not one).
pub fn capability_shaped(word: &str) -> bool {
    word.len() > 2
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && word.contains('_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn presence(s: &str) -> (bool, bool) {
        let w = presence_words(&normalise(s));
        (w.required.is_some(), w.optional.is_some())
    }

    #[test]
    fn phrasings_of_presence() {
        assert_eq!(presence("The ID. This field is REQUIRED."), (true, false));
        assert_eq!(presence("This is a REQUIRED field."), (true, false));
        assert_eq!(presence("This is an OPTIONAL field."), (false, true));
        assert_eq!(
            presence("The suggested name. This field is REQUIRED for\n idempotency."),
            (true, false)
        );
        assert_eq!(
            presence("OPTIONAL. It can be used to list only a specific snapshot."),
            (false, true)
        );
        assert_eq!(
            presence("The key name segment is REQUIRED. The prefix is OPTIONAL."),
            (false, false)
        );
        assert_eq!(presence("Secrets required by plugin. This field is OPTIONAL."), (false, true));
        assert_eq!(presence("This field is REQUIRED. This field is OPTIONAL."), (true, true));
        assert_eq!(presence("This field is optional. Default value is false."), (false, true));
        assert_eq!(
            presence("Secrets required by the plugin to complete the request."),
            (false, false)
        );
    }

    #[test]
    fn size_overrides() {
        let node_id = "This field overrides the general CSI size limit. The size of this field SHALL NOT exceed 256 bytes. The general CSI size limit, 128 byte, is RECOMMENDED";
        assert_eq!(size_words(node_id), Some(SizeWords::Max(256)));
        let path = "This field overrides the general CSI size limit. SP SHOULD support the maximum path length allowed by the operating system/filesystem, but, at a minimum, SP MUST accept a max path length of at least 128 bytes.";
        assert_eq!(size_words(path), Some(SizeWords::AtLeast(128)));
        assert_eq!(size_words("The ID of the volume."), None);
        let flags = "MAY contain sensitive information. The total size of this repeated field SHALL NOT exceed 4 KiB.";
        assert_eq!(size_words(flags), Some(SizeWords::MaxTotal(4096)));
    }

    #[test]
    fn plugin_generated_values() {
        let id = "The identifier for this volume, generated by the plugin. This field is REQUIRED.";
        assert!(plugin_generated(id));
        let node = "The identifier of the node as understood by the SP. This field SHALL be used by the CO in subsequent calls, including `ControllerPublishVolume`, to refer to this node.";
        assert!(plugin_generated(node));
        let token = "This token allows you to get the next page of entries for `ListVolumes` request. If the number of entries is larger than `max_entries`, use the `next_token` as a value for the `starting_token` field in the next `ListVolumes` request.";
        assert!(plugin_generated(token));
        let context = "Opaque static publish properties of the volume. The contents of this field SHALL be opaque to a CO. This field is OPTIONAL and when present MUST be passed to subsequent `NodeStageVolume` or `NodePublishVolume` calls";
        assert!(plugin_generated(context));
        // The request side names the token, but the CO sets it.
        let starting = "A token to specify where to start paginating. Set this field to `next_token` returned by a previous `ListVolumes` call to get the next page of entries.";
        assert!(!plugin_generated(starting));
        assert!(!plugin_generated(
            "The ID of the volume to be used on a node. This field is REQUIRED."
        ));
    }

    #[test]
    fn oneof_requirement() {
        assert!(oneof_required(
            "Specifies what API the volume will be accessed using. One of the following fields MUST be specified."
        ));
        assert!(!oneof_required("Service that the plugin supports."));
    }

    #[test]
    fn what_capabilities_say() {
        let get = "Indicates the SP supports the ControllerGetVolume RPC. This enables COs to, for example, fetch per volume information after a volume is provisioned.";
        assert_eq!(capability_rpc(get), Some("ControllerGetVolume"));
        assert_eq!(
            capability_rpc("Indicates the SP supports the `GetSnapshot` RPC."),
            Some("GetSnapshot")
        );
        let stats = "If Plugin implements GET_VOLUME_STATS capability then it MUST implement NodeGetVolumeStats RPC call for fetching volume statistics.";
        assert_eq!(capability_rpc(stats), Some("NodeGetVolumeStats"));
        assert_eq!(
            capability_rpc("Indicates the SP supports ControllerPublishVolume.readonly field."),
            None
        );
        assert_eq!(
            capability_rpc(
                "Indicates the SP supports the SINGLE_NODE_SINGLE_WRITER and/or SINGLE_NODE_MULTI_WRITER access modes."
            ),
            None
        );
        assert_eq!(capability_rpc("See VolumeExpansion for details."), None);

        let published = "Indicates the SP supports the ListVolumesResponse.entry.published_node_ids field and the ControllerGetVolumeResponse.published_node_ids field. The SP MUST also support PUBLISH_UNPUBLISH_VOLUME.";
        assert_eq!(capability_requires(published), Some((None, "PUBLISH_UNPUBLISH_VOLUME")));
        let health = "Indicates the SP supports the ControllerListVolumeHealth RPC. This enables COs to fetch volume health information from the Controller Plugin's perspective. A plugin which supports the LIST_VOLUME_HEALTH capability MUST also support the GET_VOLUME_HEALTH capability.";
        assert_eq!(
            capability_requires(health),
            Some((Some("LIST_VOLUME_HEALTH"), "GET_VOLUME_HEALTH"))
        );
        assert_eq!(capability_requires(get), None);
        assert_eq!(capability_requires("The SP MUST also support it."), None);
    }
}
