//! Whether a text is a container image reference, by the grammar of the distribution project's
//! `reference` package (the one the kubelet and every registry client read): `[host[:port]/]path
//! [:tag][@algorithm:hex]`, path components lowercase, a tag of at most 128 word characters, dots
//! and dashes, not starting with either.

/// Checks `image`.
///
/// # Errors
///
/// What is wrong with it, in a phrase.
pub fn check_image(image: &str) -> Result<(), String> {
    if image.is_empty() {
        return Err("it is empty".into());
    }
    if let Some(c) = image.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("{c:?} is not allowed"));
    }
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        check_digest(digest)?;
    }
    // A tag follows the last ':' after the last '/' (a ':' before it is a registry's port).
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_slash..].rfind(':') {
        Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
        None => (rest, None),
    };
    if let Some(tag) = tag {
        check_tag(tag)?;
    }
    if name.len() > 255 {
        return Err(format!("the name is {} characters long; the limit is 255", name.len()));
    }
    let mut components: Vec<&str> = name.split('/').collect();
    let first = components[0];
    let has_host = components.len() > 1
        && (first.contains('.')
            || first.contains(':')
            || first == "localhost"
            || first.chars().any(|c| c.is_ascii_uppercase()));
    if has_host {
        check_host(first)?;
        components.remove(0);
    }
    for component in components {
        check_path_component(component)?;
    }
    Ok(())
}

fn check_host(host: &str) -> Result<(), String> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !name.ends_with(']') || host.starts_with('[') => (name, Some(port)),
        _ => (host, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(format!("the registry port '{port}' is not a number"));
    }
    if name.starts_with('[') && name.ends_with(']') {
        let inner = &name[1..name.len() - 1];
        return if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            Ok(())
        } else {
            Err(format!("the registry '{name}' is not an IPv6 address"))
        };
    }
    for label in name.split('.') {
        let ok = !label.is_empty()
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(format!("the registry '{name}' is not a host name"));
        }
    }
    Ok(())
}

fn check_path_component(component: &str) -> Result<(), String> {
    if component.is_empty() {
        return Err("a path component is empty".into());
    }
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return Err(format!("'{component}' must start and end with a lowercase letter or digit"));
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if alnum(b) {
            i += 1;
            continue;
        }
        // A separator: '.', '_', '__' or any run of '-', between alphanumerics.
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let sep = &component[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-');
        if !ok {
            return Err(format!(
                "'{component}' holds '{sep}'; path components are lowercase letters and digits \
                 separated by '.', '_', '__' or dashes"
            ));
        }
    }
    Ok(())
}

fn check_tag(tag: &str) -> Result<(), String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && tag.starts_with(word)
        && tag.chars().all(|c| word(c) || c == '.' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the tag '{tag}' is not 1 to 128 letters, digits, '_', '.' and '-' starting with a \
             letter, digit or '_'"
        ))
    }
}

fn check_digest(digest: &str) -> Result<(), String> {
    let bad = || format!("the digest '{digest}' is not ALGORITHM:HEX");
    let (algorithm, encoded) = digest.split_once(':').ok_or_else(bad)?;
    let algorithm_ok = algorithm.starts_with(|c: char| c.is_ascii_alphabetic())
        && algorithm.chars().all(|c| c.is_ascii_alphanumeric() || "+._-".contains(c));
    if !algorithm_ok || encoded.len() < 32 || !encoded.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_the_registries_take() {
        for good in [
            "memdriver",
            "memdriver:0.1.0",
            "registry.k8s.io/sig-storage/csi-provisioner:v6.3.0",
            "localhost:5000/a/b_c__d.e--f:latest",
            "localhost/driver",
            "ghcr.io/org/driver@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "[::1]:5000/driver:_x",
            "Registry.Example.com/driver",
        ] {
            assert_eq!(check_image(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn texts_that_are_not_references() {
        for (bad, why) in [
            ("", "empty"),
            ("My/Driver", "'Driver' must start and end"),
            ("driver:", "the tag ''"),
            ("driver:-x", "the tag '-x'"),
            ("driver:a/b", "the registry port 'a'"),
            ("a b", "' ' is not allowed"),
            ("driver@sha256:xyz", "the digest"),
            ("host:port/driver", "the registry port 'port'"),
            ("reg-.io/driver", "not a host name"),
            ("a//b", "a path component is empty"),
            ("a/b..c", "holds '..'"),
            ("a/b-", "must start and end"),
        ] {
            let err = check_image(bad).expect_err(bad);
            assert!(err.contains(why), "{bad}: {err}");
        }
        let long = format!("a/{}", "b".repeat(260));
        assert!(check_image(&long).expect_err("long").contains("255"));
    }
}
