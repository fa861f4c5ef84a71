//! The schemas the viewer knows: descriptor pools plus what the spec says about each field
//! (presence, secret, alpha, size limit, comment).
//!
//! Sources, in order of preference: the CSI spec directories in the corpus read through
//! `csikit_spec` (the spec model carries every fact), or any `.proto` (compiled with protox) or
//! encoded `FileDescriptorSet`, whose facts are read from the descriptors' options (`*_secret`,
//! `alpha_*`) and comments. When the `csikit` crate's embedded descriptors and facts table build,
//! they become the default source; the interface here stays the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use csikit_spec::{Presence, SizeLimit};
use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor, Value};

/// What the spec says about one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldFacts {
    /// REQUIRED, OPTIONAL or not stated.
    pub presence: Presence,
    /// Marked `*_secret`: never shown unless asked.
    pub secret: bool,
    /// Marked `alpha_*`.
    pub alpha: bool,
    /// The size rule.
    pub size_limit: SizeLimit,
    /// The value MUST NOT be negative.
    pub non_negative: bool,
    /// The value MUST NOT hold the spec's control characters.
    pub no_control_chars: bool,
    /// The field's comment.
    pub comment: String,
}

impl Default for FieldFacts {
    fn default() -> Self {
        FieldFacts {
            presence: Presence::Unspecified,
            secret: false,
            alpha: false,
            size_limit: SizeLimit::None,
            non_negative: false,
            no_control_chars: false,
            comment: String::new(),
        }
    }
}

impl FieldFacts {
    /// The facts as a short note for a `#` comment: `REQUIRED, secret, max 128 bytes`; with
    /// `redacted`, says the value is hidden.
    pub fn note(&self, redacted: bool) -> String {
        let mut parts: Vec<String> = Vec::new();
        match self.presence {
            Presence::Required => parts.push("REQUIRED".into()),
            Presence::Optional => parts.push("OPTIONAL".into()),
            Presence::Unspecified | Presence::Unknown => {}
        }
        if self.alpha {
            parts.push("alpha".into());
        }
        if self.secret {
            parts.push(if redacted { "secret, redacted".into() } else { "secret".into() });
        }
        match self.size_limit {
            SizeLimit::General { bytes } | SizeLimit::Max { bytes } => {
                parts.push(format!("max {bytes} bytes"))
            }
            SizeLimit::MaxTotal { bytes } => parts.push(format!("max {bytes} bytes in total")),
            SizeLimit::AtLeast { bytes } => {
                parts.push(format!("no max, at least {bytes} bytes accepted"))
            }
            SizeLimit::None => {}
        }
        if self.non_negative {
            parts.push("non-negative".into());
        }
        parts.join(", ")
    }
}

/// What the spec says about one message.
#[derive(Debug, Clone, Default)]
pub struct MessageFacts {
    /// Marked `alpha_*`.
    pub alpha: bool,
    /// The message's comment.
    pub comment: String,
    /// Facts by field number.
    pub fields: HashMap<u32, FieldFacts>,
    /// Oneofs one of whose fields MUST be set.
    pub required_oneofs: Vec<String>,
}

/// Every message type the viewer can decode, with its facts.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    pools: Vec<DescriptorPool>,
    facts: HashMap<String, MessageFacts>,
    /// Where each pool came from, for messages.
    pub sources: Vec<String>,
    /// The schema is the `csikit` crate's own, so its generated validators apply.
    pub builtin: bool,
}

static NO_FIELD_FACTS: std::sync::LazyLock<FieldFacts> =
    std::sync::LazyLock::new(FieldFacts::default);

impl Schema {
    /// The CSI schema embedded in the `csikit` crate: csi.v1 and every csi-addons package.
    ///
    /// # Errors
    ///
    /// When an embedded descriptor set does not decode (a build problem, not an input one).
    pub fn builtin() -> Result<Schema> {
        let mut schema = Schema { builtin: true, ..Schema::default() };
        let packages: [(&str, &[u8], &csikit::facts::PackageFacts); 5] = [
            ("csikit::v1", csikit::v1::FILE_DESCRIPTOR_SET, &csikit::v1::facts::FACTS),
            (
                "csikit::addons::identity",
                csikit::addons::identity::FILE_DESCRIPTOR_SET,
                &csikit::addons::identity::facts::FACTS,
            ),
            (
                "csikit::addons::reclaimspace",
                csikit::addons::reclaimspace::FILE_DESCRIPTOR_SET,
                &csikit::addons::reclaimspace::facts::FACTS,
            ),
            (
                "csikit::addons::replication",
                csikit::addons::replication::FILE_DESCRIPTOR_SET,
                &csikit::addons::replication::facts::FACTS,
            ),
            (
                "csikit::addons::volumegroup",
                csikit::addons::volumegroup::FILE_DESCRIPTOR_SET,
                &csikit::addons::volumegroup::facts::FACTS,
            ),
        ];
        for (name, bytes, facts) in packages {
            let pool = DescriptorPool::decode(bytes)
                .with_context(|| format!("the descriptors of {name} do not decode"))?;
            schema.add_facts_table(name.to_owned(), pool, facts);
        }
        Ok(schema)
    }

    /// Adds a pool whose facts come from a generated facts table (comments from source info).
    pub fn add_facts_table(
        &mut self,
        source: String,
        pool: DescriptorPool,
        table: &csikit::facts::PackageFacts,
    ) {
        // Comments (and anything the table does not cover) come from the descriptors.
        let mut from_options = Schema::default();
        from_options.add_option_facts(&pool);
        for m in table.messages {
            let Some(desc) = pool.get_message_by_name(m.full_name) else {
                continue;
            };
            let base = from_options.facts.remove(m.full_name).unwrap_or_default();
            let mut facts = MessageFacts {
                alpha: m.alpha,
                comment: base.comment,
                fields: HashMap::new(),
                required_oneofs: m
                    .oneofs
                    .iter()
                    .filter(|o| o.required)
                    .map(|o| o.name.to_owned())
                    .collect(),
            };
            for f in m.fields {
                if desc.get_field(f.number).is_none() {
                    continue;
                }
                let comment =
                    base.fields.get(&f.number).map(|b| b.comment.clone()).unwrap_or_default();
                facts.fields.insert(
                    f.number,
                    FieldFacts {
                        presence: match f.presence {
                            csikit::facts::Presence::Required => Presence::Required,
                            csikit::facts::Presence::Optional => Presence::Optional,
                            csikit::facts::Presence::Unspecified => Presence::Unspecified,
                        },
                        secret: f.secret,
                        alpha: f.alpha,
                        size_limit: match f.size_limit {
                            csikit::facts::SizeLimit::None => SizeLimit::None,
                            csikit::facts::SizeLimit::General { bytes } => {
                                SizeLimit::General { bytes }
                            }
                            csikit::facts::SizeLimit::Max { bytes } => SizeLimit::Max { bytes },
                            csikit::facts::SizeLimit::MaxTotal { bytes } => {
                                SizeLimit::MaxTotal { bytes }
                            }
                            csikit::facts::SizeLimit::AtLeast { bytes } => {
                                SizeLimit::AtLeast { bytes }
                            }
                        },
                        non_negative: f.non_negative,
                        no_control_chars: f.no_control_chars,
                        comment,
                    },
                );
            }
            self.facts.entry(m.full_name.to_owned()).or_insert(facts);
        }
        self.add_option_facts(&pool);
        self.pools.push(pool);
        self.sources.push(source);
    }

    /// Adds a pool whose facts come from a spec model.
    pub fn add_model(&mut self, source: String, pool: DescriptorPool, model: &csikit_spec::Model) {
        for m in &model.messages {
            let Some(desc) = pool.get_message_by_name(&m.full_name) else {
                continue;
            };
            let mut facts = MessageFacts {
                alpha: m.alpha,
                comment: m.comment.clone(),
                fields: HashMap::new(),
                required_oneofs: m
                    .oneofs
                    .iter()
                    .filter(|o| o.required)
                    .map(|o| o.name.clone())
                    .collect(),
            };
            for f in &m.fields {
                if desc.get_field(f.number).is_none() {
                    continue;
                }
                facts.fields.insert(
                    f.number,
                    FieldFacts {
                        presence: f.presence,
                        secret: f.secret,
                        alpha: f.alpha,
                        size_limit: f.size_limit,
                        non_negative: f.non_negative,
                        no_control_chars: f.no_control_chars,
                        comment: f.comment.clone(),
                    },
                );
            }
            self.facts.entry(m.full_name.clone()).or_insert(facts);
        }
        // Types the model leaves out (imports such as the CSI types an addon uses) still get
        // the facts their options state.
        self.add_option_facts(&pool);
        self.pools.push(pool);
        self.sources.push(source);
    }

    /// Adds a pool whose facts are read from its options and comments.
    pub fn add_pool(&mut self, source: String, pool: DescriptorPool) {
        self.add_option_facts(&pool);
        self.pools.push(pool);
        self.sources.push(source);
    }

    fn add_option_facts(&mut self, pool: &DescriptorPool) {
        for desc in pool.all_messages() {
            if self.facts.contains_key(desc.full_name()) {
                continue;
            }
            let mut facts = MessageFacts {
                alpha: has_flag(&desc.options(), |n| n.starts_with("alpha_")),
                comment: comment_of(desc.parent_file().file_descriptor_proto(), desc.path()),
                ..MessageFacts::default()
            };
            for o in desc.oneofs() {
                let text = csikit_spec::comment::normalise(&comment_of(
                    o.parent_file().file_descriptor_proto(),
                    o.path(),
                ));
                if !o.is_synthetic() && csikit_spec::comment::oneof_required(&text) {
                    facts.required_oneofs.push(o.name().to_owned());
                }
            }
            for f in desc.fields() {
                let comment = comment_of(f.parent_file().file_descriptor_proto(), f.path());
                let text = csikit_spec::comment::normalise(&comment);
                let words = csikit_spec::comment::presence_words(&text);
                let presence = match (words.required, words.optional) {
                    (Some(r), Some(o)) if o < r => Presence::Optional,
                    (Some(_), _) => Presence::Required,
                    (None, Some(_)) => Presence::Optional,
                    (None, None) => Presence::Unspecified,
                };
                let size_limit = match csikit_spec::comment::size_words(&text) {
                    Some(csikit_spec::comment::SizeWords::Max(n)) => SizeLimit::Max { bytes: n },
                    Some(csikit_spec::comment::SizeWords::MaxTotal(n)) => {
                        SizeLimit::MaxTotal { bytes: n }
                    }
                    Some(csikit_spec::comment::SizeWords::AtLeast(n)) => {
                        SizeLimit::AtLeast { bytes: n }
                    }
                    _ => SizeLimit::None,
                };
                let options = f.options();
                facts.fields.insert(
                    f.number(),
                    FieldFacts {
                        presence,
                        secret: has_flag(&options, |n| n.ends_with("_secret")),
                        alpha: has_flag(&options, |n| n.starts_with("alpha_")),
                        size_limit,
                        non_negative: csikit_spec::comment::non_negative(&text),
                        no_control_chars: csikit_spec::comment::no_control_chars(&text),
                        comment,
                    },
                );
            }
            self.facts.insert(desc.full_name().to_owned(), facts);
        }
    }

    /// The facts of a message (empty when none are known).
    pub fn message_facts(&self, desc: &MessageDescriptor) -> Option<&MessageFacts> {
        self.facts.get(desc.full_name())
    }

    /// The facts of a field nothing is known about.
    pub fn no_facts() -> &'static FieldFacts {
        &NO_FIELD_FACTS
    }

    /// The facts of a field (all defaults when none are known).
    pub fn field_facts(&self, field: &FieldDescriptor) -> &FieldFacts {
        self.facts
            .get(field.parent_message().full_name())
            .and_then(|m| m.fields.get(&field.number()))
            .unwrap_or(&NO_FIELD_FACTS)
    }

    /// True when the field is marked secret.
    pub fn is_secret(&self, field: &FieldDescriptor) -> bool {
        self.field_facts(field).secret
    }

    /// Every message type worth guessing: not map entries, not descriptor or well-known types,
    /// each full name once.
    pub fn candidates(&self) -> Vec<MessageDescriptor> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for pool in &self.pools {
            for m in pool.all_messages() {
                if m.is_map_entry() || m.full_name().starts_with("google.protobuf.") {
                    continue;
                }
                if seen.insert(m.full_name().to_owned()) {
                    out.push(m);
                }
            }
        }
        out
    }

    /// Finds a message type by full name (a leading dot allowed) or by short name.
    ///
    /// # Errors
    ///
    /// When no type or more than one type has that short name.
    pub fn find_message(&self, name: &str) -> Result<MessageDescriptor> {
        let name = name.trim_start_matches('.');
        for pool in &self.pools {
            if let Some(m) = pool.get_message_by_name(name) {
                return Ok(m);
            }
        }
        let suffix = format!(".{name}");
        let matches: Vec<MessageDescriptor> = self
            .candidates()
            .into_iter()
            .filter(|m| m.full_name().ends_with(&suffix) || m.name() == name)
            .collect();
        match matches.len() {
            1 => Ok(matches.into_iter().next().unwrap_or_else(|| unreachable!())),
            0 => bail!(
                "unknown message type '{name}' (known packages: {})",
                self.packages().join(", ")
            ),
            _ => bail!(
                "message type '{name}' is ambiguous: {}",
                matches.iter().map(|m| m.full_name().to_owned()).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    fn packages(&self) -> Vec<String> {
        let mut p: Vec<String> = self
            .pools
            .iter()
            .flat_map(|pool| pool.files().map(|f| f.package_name().to_owned()))
            .collect();
        p.sort();
        p.dedup();
        p.retain(|p| !p.starts_with("google."));
        p
    }

    /// The method of a gRPC path, `/package.Service/Method`.
    pub fn find_method(&self, path: &str) -> Option<prost_reflect::MethodDescriptor> {
        let (service, method) = path.strip_prefix('/')?.split_once('/')?;
        self.pools
            .iter()
            .find_map(|pool| pool.get_service_by_name(service))
            .and_then(|s| s.methods().find(|m| m.name() == method))
    }

    /// True when no pool has been added.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }
}

/// True when the options hold an extension whose name passes `name_matches` set to `true`.
fn has_flag(options: &prost_reflect::DynamicMessage, name_matches: impl Fn(&str) -> bool) -> bool {
    options.extensions().any(|(ext, v)| name_matches(ext.name()) && matches!(v, Value::Bool(true)))
}

/// The leading comment (and trailing one) at `path` in the file's source info.
fn comment_of(file: &prost_types::FileDescriptorProto, path: &[i32]) -> String {
    let Some(info) = &file.source_code_info else {
        return String::new();
    };
    info.location
        .iter()
        .find(|l| l.path == path)
        .map(|l| {
            let mut s = csikit_spec::comment::clean_comment(l.leading_comments());
            let t = csikit_spec::comment::clean_comment(l.trailing_comments());
            if !t.is_empty() {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&t);
            }
            s
        })
        .unwrap_or_default()
}

/// The corpus spec directories matching the built-in schema (v1.12.0 and the csi-addons), for
/// `--spec-dir`-style loading in tests and fuzzing.
pub fn default_spec_dirs() -> Vec<PathBuf> {
    let corpus = csikit_spec::corpus_dir();
    let mut dirs = vec![corpus.join("csi-spec/v1.12.0")];
    for addon in ["identity", "reclaimspace", "replication", "volumegroup"] {
        dirs.push(corpus.join("csi-addons").join(addon));
    }
    dirs
}

/// Loads spec directories through the spec model.
///
/// # Errors
///
/// When a directory is missing or its spec has errors.
pub fn load_spec_dirs(schema: &mut Schema, dirs: &[PathBuf]) -> Result<()> {
    for dir in dirs {
        if !dir.is_dir() {
            bail!(
                "no CSI schema: '{}' not found (set {} to the corpus, or pass --proto / --descriptor-set)",
                dir.display(),
                csikit_spec::CORPUS_ENV
            );
        }
        let loaded = csikit_spec::load_dir(dir, &csikit_spec::LoadOptions::default());
        let (Some(model), Some(compiled)) = (loaded.model, loaded.compiled) else {
            let first = loaded
                .diagnostics
                .0
                .iter()
                .find(|d| d.is_error())
                .map(|d| d.message.clone())
                .unwrap_or_default();
            bail!("cannot load the spec in '{}': {first}", dir.display());
        };
        schema.add_model(dir.display().to_string(), compiled.pool, &model);
    }
    Ok(())
}

/// Compiles a `.proto` file with protox (its directory and `includes` as import paths).
///
/// # Errors
///
/// When protox reports an error.
pub fn load_proto(schema: &mut Schema, file: &Path, includes: &[PathBuf]) -> Result<()> {
    let mut paths: Vec<PathBuf> = includes.to_vec();
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    paths.push(if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir });
    // The pool straight from protox keeps custom options; going through prost-types would drop them.
    let pool = protox::Compiler::new(paths)
        .and_then(|mut c| {
            c.include_source_info(true).include_imports(true);
            c.open_file(file.file_name().map(Path::new).unwrap_or(file))?;
            Ok(c.descriptor_pool())
        })
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("cannot compile '{}'", file.display()))?;
    schema.add_pool(file.display().to_string(), pool);
    Ok(())
}

/// Reads an encoded `FileDescriptorSet`.
///
/// # Errors
///
/// When the file cannot be read or is not a valid descriptor set.
pub fn load_descriptor_set(schema: &mut Schema, file: &Path) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read '{}'", file.display()))?;
    // Decoded by prost-reflect itself, so custom options (secret, alpha) are kept.
    let pool = DescriptorPool::decode(bytes.as_slice()).with_context(|| {
        format!("'{}' is not a usable encoded FileDescriptorSet", file.display())
    })?;
    schema.add_pool(file.display().to_string(), pool);
    Ok(())
}

/// The wire type a field's values use (packed repeated scalars aside).
pub fn wire_type_of(kind: &Kind) -> crate::wire::WireType {
    use crate::wire::WireType;
    match kind {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => WireType::I64,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => WireType::I32,
        Kind::String | Kind::Bytes | Kind::Message(_) => WireType::Len,
        _ => WireType::Varint,
    }
}

/// True for field types whose repeated form may be packed.
pub fn is_packable(kind: &Kind) -> bool {
    !matches!(kind, Kind::String | Kind::Bytes | Kind::Message(_))
}
