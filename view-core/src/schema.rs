//! The schemas the viewer knows: descriptor pools plus what the spec says about each message and
//! field, in csikit's one facts family (`csikit::facts`).
//!
//! The viewer reads no facts of its own: the built-in schema takes the `csikit` crate's generated
//! facts tables (which come from the spec model), and `--spec-dir`, `--proto` and
//! `--descriptor-set` load a `csikit_spec::Model` and take its facts and comments.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};
use csikit::facts::{FieldFacts, Label, MessageFacts, PackageFacts, Presence, SizeLimit};
use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor, MethodDescriptor};

use crate::former::{self, Former, Restored};
use crate::rpcs::{ErrorLookup, ObligedRpc, RpcTables};

mod pool;
use pool::{Pool, former_message_facts};

/// The comments of one message and its fields, as the spec model reads them.
#[derive(Debug, Clone, Default)]
struct MessageDocs {
    comment: String,
    fields: HashMap<u32, String>,
}

/// The comments of one source: read with its model, or (built-in tables) on first use.
#[derive(Debug)]
enum Docs {
    Read(HashMap<String, MessageDocs>),
    /// A generated package's descriptors, read into a model when a comment is first asked for.
    Embedded {
        bytes: &'static [u8],
        read: OnceLock<HashMap<String, MessageDocs>>,
    },
}

impl Docs {
    fn of_model(model: &csikit_spec::Model) -> Docs {
        Docs::Read(comments_of(model))
    }

    fn messages(&self) -> &HashMap<String, MessageDocs> {
        match self {
            Docs::Read(m) => m,
            // The bytes were made by csikit's generator; should they not read, comments are
            // left out rather than the viewer failing.
            Docs::Embedded { bytes, read } => read.get_or_init(|| {
                load_descriptor_bytes("csikit's embedded descriptors", bytes)
                    .map(|(model, _)| comments_of(&model))
                    .unwrap_or_default()
            }),
        }
    }
}

/// Every message's comment and its fields', by full name and field number.
fn comments_of(model: &csikit_spec::Model) -> HashMap<String, MessageDocs> {
    model
        .messages
        .iter()
        .map(|m| {
            let fields = m.fields.iter().map(|f| (f.number, f.comment.clone())).collect();
            (m.full_name.clone(), MessageDocs { comment: m.comment.clone(), fields })
        })
        .collect()
}

/// Every message type the viewer can decode, with its facts.
#[derive(Debug, Default)]
pub struct Schema {
    pools: Vec<Pool>,
    /// One facts table per source: borrowed from `csikit`, or a loaded model's.
    packages: Vec<Cow<'static, PackageFacts>>,
    /// A message's full name to its place in `packages`; the first source to state it wins.
    index: HashMap<String, (usize, usize)>,
    /// One per entry of `packages`.
    docs: Vec<Docs>,
    /// One per entry of `packages`: error tables and obligations.
    rpcs: Vec<RpcTables>,
    /// Where each pool came from, for messages.
    pub sources: Vec<String>,
    /// The schema is the `csikit` crate's own, so its generated validators apply.
    pub builtin: bool,
}

/// The facts of a field nothing is known about.
static NO_FIELD_FACTS: FieldFacts = FieldFacts {
    name: Cow::Borrowed(""),
    number: 0,
    type_name: Cow::Borrowed(""),
    label: Label::Singular,
    oneof: None,
    presence: Presence::Unknown,
    secret: false,
    alpha: false,
    size_limit: SizeLimit::None,
    non_negative: false,
    no_control_chars: false,
    plugin_generated: false,
};

/// The facts as a short note for a `#` comment: `REQUIRED, secret, max 128 bytes`; with
/// `redacted`, says the value is hidden.
pub fn note(facts: &FieldFacts, redacted: bool) -> String {
    Note { facts, redacted }.to_string()
}

/// The note of [`note`], written where it goes rather than made a `String` (the printers write
/// one per line).
#[derive(Debug, Clone, Copy)]
pub struct Note<'a> {
    /// The field's facts.
    pub facts: &'a FieldFacts,
    /// The value is hidden.
    pub redacted: bool,
}

impl Note<'_> {
    /// True when the facts say nothing worth a note.
    pub fn is_empty(&self) -> bool {
        let f = self.facts;
        f.presence.word().is_none()
            && !f.alpha
            && !f.secret
            && matches!(f.size_limit, SizeLimit::None)
            && !f.non_negative
    }
}

impl std::fmt::Display for Note<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let facts = self.facts;
        // Each part after the first behind a comma.
        let mut first = true;
        let mut sep = |f: &mut std::fmt::Formatter<'_>| {
            let s = if first { "" } else { ", " };
            first = false;
            f.write_str(s)
        };
        if let Some(word) = facts.presence.word() {
            sep(f)?;
            f.write_str(word)?;
        }
        if facts.alpha {
            sep(f)?;
            f.write_str("alpha")?;
        }
        if facts.secret {
            sep(f)?;
            f.write_str(if self.redacted { "secret, redacted" } else { "secret" })?;
        }
        match facts.size_limit {
            SizeLimit::General { bytes } | SizeLimit::Max { bytes } => {
                sep(f)?;
                write!(f, "max {bytes} bytes")?;
            }
            SizeLimit::MaxTotal { bytes } => {
                sep(f)?;
                write!(f, "max {bytes} bytes in total")?;
            }
            SizeLimit::AtLeast { bytes } => {
                sep(f)?;
                write!(f, "no max, at least {bytes} bytes accepted")?;
            }
            SizeLimit::None => {}
        }
        if facts.non_negative {
            sep(f)?;
            f.write_str("non-negative")?;
        }
        Ok(())
    }
}

impl Schema {
    /// The CSI schema embedded in the `csikit` crate: csi.v1 and every csi-addons package, with
    /// their generated facts tables.
    ///
    /// # Errors
    ///
    /// When an embedded descriptor set does not decode (a build problem, not an input one).
    pub fn builtin() -> Result<Schema> {
        let mut schema = Schema { builtin: true, ..Schema::default() };
        use csikit::addons::{identity, reclaimspace, replication, volumegroup};
        for (facts, bytes, rpcs) in [
            (
                &csikit::v1::facts::FACTS,
                csikit::v1::FILE_DESCRIPTOR_SET,
                RpcTables::generated(csikit::v1::errors::rpc_rows, csikit::v1::errors::GENERAL),
            ),
            (
                &identity::facts::FACTS,
                identity::FILE_DESCRIPTOR_SET,
                RpcTables::generated(identity::errors::rpc_rows, identity::errors::GENERAL),
            ),
            (
                &reclaimspace::facts::FACTS,
                reclaimspace::FILE_DESCRIPTOR_SET,
                RpcTables::generated(reclaimspace::errors::rpc_rows, reclaimspace::errors::GENERAL),
            ),
            (
                &replication::facts::FACTS,
                replication::FILE_DESCRIPTOR_SET,
                RpcTables::generated(replication::errors::rpc_rows, replication::errors::GENERAL),
            ),
            (
                &volumegroup::facts::FACTS,
                volumegroup::FILE_DESCRIPTOR_SET,
                RpcTables::generated(volumegroup::errors::rpc_rows, volumegroup::errors::GENERAL),
            ),
        ] {
            let docs = Docs::Embedded { bytes, read: OnceLock::new() };
            let source = format!("csikit ({})", facts.package);
            // csi.v1 is named as older releases named it; a csi-addons set holds a copy of
            // csi.proto for its imports, whose types are read from csi.v1's own pool.
            let release = (facts.package == "csi.v1")
                .then(|| former::release_name(&facts.release).to_owned());
            let pool = Pool::embedded(bytes, release);
            schema.add(source, pool, Cow::Borrowed(facts), docs, rpcs);
        }
        Ok(schema)
    }

    /// The schema of CSI release `name` (`v1.12.0`) with the csi-addons packages: the built-in
    /// schema for `csikit`'s own release; else that release's folder in the corpus (read as
    /// `--spec-dir` reads one); else, for a release `csikit` keeps (`csikit::v1_12`), its
    /// descriptors, facts and error tables (no obligations: csikit keeps no server for it).
    ///
    /// # Errors
    ///
    /// When the release is none of those (the message names those there are), or its folder
    /// does not load.
    pub fn release(name: &str) -> Result<Schema> {
        let mut schema = Schema::builtin()?;
        if name == csikit::SPEC_RELEASE {
            return Ok(schema);
        }
        // csi.v1 is the first package of the built-in schema; the release takes its place.
        let corpus = csikit_spec::corpus::Corpus::open().ok();
        let mut release = Schema::default();
        if let Some(found) = corpus.as_ref().and_then(|c| c.release(name)) {
            load_spec_dirs(&mut release, std::slice::from_ref(&found.dir))?;
        } else if let Some(kept) = former::builtin_older().into_iter().find(|o| o.release == name)
            && let Some(facts) = kept.facts
        {
            let rpcs = RpcTables::generated(
                csikit::v1_12::errors::rpc_rows,
                csikit::v1_12::errors::GENERAL,
            );
            let docs = Docs::Embedded { bytes: kept.set, read: OnceLock::new() };
            let source = format!("csikit ({} {name})", facts.package);
            release.add(source, Pool::embedded(kept.set, None), Cow::Borrowed(facts), docs, rpcs);
        } else {
            let mut known = vec![csikit::SPEC_RELEASE.to_owned()];
            known.extend(former::builtin_older().iter().map(|o| o.release.to_owned()));
            known.extend(corpus.iter().flat_map(|c| c.releases.iter().map(|r| r.name.clone())));
            known.sort();
            known.dedup();
            bail!("unknown CSI release '{name}' (known here: {})", known.join(", "));
        }
        schema.replace_first(release);
        Ok(schema)
    }

    /// Puts the sources of `other` in place of this schema's first source (the built-in
    /// schema's `csi.v1`); the result is no longer the built-in schema.
    fn replace_first(&mut self, other: Schema) {
        let rest = std::mem::take(self);
        let parts = |s: Schema| {
            s.pools
                .into_iter()
                .zip(s.packages)
                .zip(s.docs)
                .zip(s.rpcs)
                .zip(s.sources)
                .map(|((((pool, facts), docs), rpcs), source)| (source, pool, facts, docs, rpcs))
                .collect::<Vec<_>>()
        };
        let kept = parts(rest).into_iter().skip(1);
        for (source, pool, facts, docs, rpcs) in parts(other).into_iter().chain(kept) {
            self.add(source, pool, facts, docs, rpcs);
        }
    }

    /// Adds a pool whose facts and comments come from a spec model; `release` names the
    /// release it is, for what it reserved (see [`former`]).
    pub fn add_model(
        &mut self,
        source: String,
        pool: DescriptorPool,
        model: &csikit_spec::Model,
        release: &str,
    ) {
        let facts = Cow::Owned(model.facts(&source));
        let (docs, rpcs) = (Docs::of_model(model), RpcTables::of_model(model));
        self.add(source, Pool::ready(pool, Some(release.to_owned())), facts, docs, rpcs);
    }

    fn add(
        &mut self,
        source: String,
        pool: Pool,
        facts: Cow<'static, PackageFacts>,
        docs: Docs,
        rpcs: RpcTables,
    ) {
        let p = self.packages.len();
        for (i, m) in facts.messages.iter().enumerate() {
            self.index.entry(m.full_name.to_string()).or_insert((p, i));
        }
        self.packages.push(facts);
        self.docs.push(docs);
        self.rpcs.push(rpcs);
        self.pools.push(pool);
        self.sources.push(source);
    }

    /// The facts tables, one per source, in the order they were added.
    pub fn facts_tables(&self) -> impl Iterator<Item = &PackageFacts> {
        self.packages.iter().map(|p| &**p)
    }

    /// The facts of a message, when a source states them (for a type put back from an older
    /// release, that release's).
    pub fn message_facts(&self, desc: &MessageDescriptor) -> Option<&MessageFacts> {
        match self.index.get(desc.full_name()) {
            Some(&(p, m)) => Some(&self.packages[p].messages[m]),
            None => {
                let former = self.former_type(desc.full_name())?;
                former_message_facts(&former.release, desc.full_name())
            }
        }
    }

    /// Where the name of a field comes from when the source reserved its number and an older
    /// release named it ([`former`]).
    pub fn former_field(&self, field: &FieldDescriptor) -> Option<&Former> {
        let message = field.parent_message();
        self.restored().find_map(|r| r.field(message.full_name(), field.number()))
    }

    /// Where the name of an enum value comes from when the source reserved its number and an
    /// older release named it.
    pub fn former_value(&self, value: &prost_reflect::EnumValueDescriptor) -> Option<&Former> {
        let parent = value.parent_enum();
        self.restored().find_map(|r| r.value(parent.full_name(), value.number()))
    }

    /// Where a type comes from when the source no longer declares it and an older release's
    /// was put back for a field of that release.
    pub fn former_type(&self, full_name: &str) -> Option<&Former> {
        self.restored().find_map(|r| r.types.get(full_name))
    }

    fn restored(&self) -> impl Iterator<Item = &Restored> {
        self.pools.iter().filter_map(Pool::restored).filter(|r| !r.is_empty())
    }

    /// The facts of the RPC at a gRPC path (`/csi.v1.Node/NodePublishVolume`), when a source
    /// states them; its `key` is the id calls are serialised on.
    pub fn method_facts(&self, path: &str) -> Option<&csikit::facts::MethodFacts> {
        self.packages.iter().find_map(|p| p.method_by_path(path))
    }

    /// The facts of a field nothing is known about (presence unknown, no rules).
    pub fn no_facts() -> &'static FieldFacts {
        &NO_FIELD_FACTS
    }

    /// The facts of a field ([`Schema::no_facts`] when none are known); for a field put back
    /// from an older release, that release's.
    pub fn field_facts(&self, field: &FieldDescriptor) -> &FieldFacts {
        let message = field.parent_message();
        self.message_facts(message)
            .and_then(|m| m.field_by_number(field.number()))
            .or_else(|| {
                let former = self.former_field(field)?;
                former_message_facts(&former.release, message.full_name())?
                    .field_by_number(field.number())
            })
            .unwrap_or(&NO_FIELD_FACTS)
    }

    /// The field's note ([`note`]), and where its name comes from when an older release named
    /// it: `OPTIONAL; named as in v1.12.0, reserved in v1.13.0`.
    pub fn field_note(&self, field: &FieldDescriptor, redacted: bool) -> String {
        let mut out = note(self.field_facts(field), redacted);
        if let Some(former) = self.former_field(field) {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(&former.to_string());
        }
        out
    }

    /// True when the field is marked secret.
    pub fn is_secret(&self, field: &FieldDescriptor) -> bool {
        self.field_facts(field).secret
    }

    fn docs(&self, message: &str) -> Option<&MessageDocs> {
        let &(p, _) = self.index.get(message)?;
        self.docs[p].messages().get(message)
    }

    /// A message's comment in the spec (empty when none is known).
    pub fn message_comment(&self, desc: &MessageDescriptor) -> &str {
        self.docs(desc.full_name()).map_or("", |d| &d.comment)
    }

    /// A field's comment in the spec (empty when none is known).
    pub fn field_comment(&self, field: &FieldDescriptor) -> &str {
        self.docs(field.parent_message().full_name())
            .and_then(|d| d.fields.get(&field.number()))
            .map_or("", String::as_str)
    }

    /// Every message type worth guessing: not map entries, not descriptor or well-known types,
    /// each full name once.
    pub fn candidates(&self) -> Vec<MessageDescriptor> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for pool in self.pools() {
            for m in pool.all_messages() {
                if m.is_map_entry()
                    || m.full_name().starts_with("google.protobuf.")
                    || self.former_type(m.full_name()).is_some()
                {
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
        for pool in self.pools() {
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
                self.package_names().join(", ")
            ),
            _ => bail!(
                "message type '{name}' is ambiguous: {}",
                matches.iter().map(|m| m.full_name().to_owned()).collect::<Vec<_>>().join(", ")
            ),
        }
    }

    fn package_names(&self) -> Vec<String> {
        let mut p: Vec<String> = self
            .pools()
            .flat_map(|pool| pool.files().map(|f| f.package_name().to_owned()))
            .collect();
        p.sort();
        p.dedup();
        p.retain(|p| !p.starts_with("google."));
        p
    }

    /// The method of a gRPC path, `/package.Service/Method`: from the first source whose facts
    /// name the service (decoding only that source's pool), else from any pool.
    pub fn find_method(&self, path: &str) -> Option<prost_reflect::MethodDescriptor> {
        let (service, method) = path.strip_prefix('/')?.split_once('/')?;
        let stated = self
            .packages
            .iter()
            .position(|p| p.methods.iter().any(|m| m.service == service))
            .and_then(|i| self.pools[i].get().get_service_by_name(service));
        stated
            .or_else(|| self.pools().find_map(|pool| pool.get_service_by_name(service)))
            .and_then(|s| s.methods().find(|m| m.name() == method))
    }

    /// Every RPC the sources' facts state, as (service full name, method name), in the order of
    /// the sources and their declarations; no pool is decoded.
    pub fn stated_methods(&self) -> impl Iterator<Item = (&str, &str)> {
        self.packages.iter().flat_map(|p| p.methods.iter().map(|m| (&*m.service, &*m.name)))
    }

    /// What the spec's error tables say about `code` returned by `method`: the RPC's own rows
    /// with that code, else the general table's, from the source that declares the method.
    pub fn error_rows(&self, method: &MethodDescriptor, code: i32) -> ErrorLookup {
        let service = method.parent_service();
        let declares = |p: &Pool| p.get().get_service_by_name(service.full_name()).is_some();
        match self.pools.iter().position(declares) {
            Some(i) => self.rpcs[i].lookup(method.name(), code),
            None => ErrorLookup::NoTables,
        }
    }

    /// Every row of `method`'s own error table and of the general table, from the source that
    /// declares the method, each table with the release it is carried from (if it is); `None`
    /// when that source states no error tables.
    pub fn error_tables(&self, method: &MethodDescriptor) -> Option<[crate::rpcs::TableRows; 2]> {
        let service = method.parent_service();
        let declares = |p: &Pool| p.get().get_service_by_name(service.full_name()).is_some();
        self.rpcs[self.pools.iter().position(declares)?].tables(method.name())
    }

    /// What the spec obliges a plugin to implement in `package` (`csi.v1`), or `None` when the
    /// source of that package does not state it (a `.proto` alone; the built-in schema until
    /// [`Schema::set_obligations`]).
    pub fn obligations(&self, package: &str) -> Option<&[ObligedRpc]> {
        let i = self.packages.iter().position(|p| p.package == package)?;
        self.rpcs[i].obligations()
    }

    /// Sets the obligations of `package`'s source: for the built-in schema, from `csikit`'s
    /// generated server tables (`csikit::v1::server::Spec::OBLIGATIONS`), which this crate does
    /// not compile (they stand on the server skeleton's tokio). Returns false when no source
    /// holds the package.
    pub fn set_obligations(&mut self, package: &str, obligations: Vec<ObligedRpc>) -> bool {
        match self.packages.iter().position(|p| p.package == package) {
            Some(i) => {
                self.rpcs[i].set_obligations(obligations);
                true
            }
            None => false,
        }
    }

    /// The descriptor pools, one per source, in the order they were added (each decoded on
    /// first use).
    pub fn pools(&self) -> impl Iterator<Item = &DescriptorPool> {
        self.pools.iter().map(Pool::get)
    }

    /// True when no pool has been added.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }
}

/// The corpus spec folders matching the built-in schema (csikit's CSI release and every
/// csi-addons package), for `--spec-dir`-style loading in tests and fuzzing.
pub fn default_spec_dirs() -> Vec<PathBuf> {
    let Ok(corpus) = csikit_spec::corpus::Corpus::open() else {
        return vec![csikit_spec::corpus_dir().join("csi-spec").join(csikit::SPEC_RELEASE)];
    };
    let release = corpus.release(csikit::SPEC_RELEASE).map(|r| r.dir.clone());
    let release =
        release.unwrap_or_else(|| corpus.root.join("csi-spec").join(csikit::SPEC_RELEASE));
    std::iter::once(release).chain(corpus.addons.iter().map(|a| a.main.dir.clone())).collect()
}

/// What a loaded source is called where a member it reserved is named: the release its path
/// names (`.../csi-spec/v1.13.0/csi.proto`: `v1.13.0`), else the path.
fn release_label(path: &Path) -> String {
    let is_release = |s: &str| {
        s.strip_prefix('v').is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    path.components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .find(|s| is_release(s))
        .map_or_else(|| format!("'{}'", path.display()), str::to_owned)
}

/// Reads one spec source through `csikit_spec::load_source` into its model and pool.
fn load_model(
    path: &Path,
    options: &csikit_spec::LoadOptions,
) -> Result<(csikit_spec::Model, DescriptorPool)> {
    model_of(path, csikit_spec::load_source(path, options))
}

/// The model and pool of `loaded`, or its first error.
fn model_of(
    path: &Path,
    loaded: csikit_spec::Loaded,
) -> Result<(csikit_spec::Model, DescriptorPool)> {
    let first_error = || {
        let d = loaded.diagnostics.0.iter().find(|d| d.is_error());
        d.map(|d| {
            let at = d.location();
            if at.is_empty() { d.message.clone() } else { format!("{at}: {}", d.message) }
        })
        .unwrap_or_else(|| "it could not be read".to_owned())
    };
    match (&loaded.model, &loaded.compiled) {
        (Some(_), Some(_)) if !loaded.diagnostics.0.iter().any(|d| d.is_error()) => {}
        _ => bail!("cannot load the spec '{}': {}", path.display(), first_error()),
    }
    let (Some(model), Some(compiled)) = (loaded.model, loaded.compiled) else {
        bail!("cannot load the spec '{}'", path.display());
    };
    Ok((model, compiled.pool))
}

/// Reads encoded descriptors (a generated package's) into their model, for its comments.
fn load_descriptor_bytes(name: &str, bytes: &[u8]) -> Result<(csikit_spec::Model, DescriptorPool)> {
    let path = Path::new(name);
    model_of(path, csikit_spec::source::load_descriptor_set_bytes(path, bytes, &Default::default()))
}

/// Loads spec folders (markdown and proto, or a proto alone) through the spec model.
///
/// # Errors
///
/// When a folder is missing or its spec has errors.
pub fn load_spec_dirs(schema: &mut Schema, dirs: &[PathBuf]) -> Result<()> {
    for dir in dirs {
        if !dir.is_dir() {
            bail!(
                "no CSI schema: '{}' not found (set {} to the corpus, or pass --proto / --descriptor-set)",
                dir.display(),
                csikit_spec::CORPUS_ENV
            );
        }
        let (model, pool) = load_model(dir, &csikit_spec::LoadOptions::default())?;
        schema.add_model(dir.display().to_string(), pool, &model, &release_label(dir));
    }
    Ok(())
}

/// Reads a `.proto` file through the spec model; its imports resolve from its folder, the
/// well-known types, and the `includes` folders.
///
/// # Errors
///
/// When the file does not compile or its model has errors.
pub fn load_proto(schema: &mut Schema, file: &Path, includes: &[PathBuf]) -> Result<()> {
    let mut options = csikit_spec::LoadOptions::default();
    if !includes.is_empty() {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read '{}'", file.display()))?;
        for name in imports_of(&text) {
            if let Some(found) = includes.iter().map(|d| d.join(name)).find(|p| p.is_file()) {
                let text = std::fs::read_to_string(&found)
                    .with_context(|| format!("cannot read '{}'", found.display()))?;
                options
                    .imports
                    .insert(name, csikit_spec::SourceFile::new(found.display().to_string(), text));
            }
        }
    }
    let (model, pool) = load_model(file, &options)?;
    schema.add_model(file.display().to_string(), pool, &model, &release_label(file));
    Ok(())
}

/// The files a proto imports (`import "x.proto";`, `import public "x.proto";`).
fn imports_of(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| {
        let rest = l.trim_start().strip_prefix("import")?.trim_start();
        let rest = rest.strip_prefix("public").or(rest.strip_prefix("weak")).unwrap_or(rest);
        let rest = rest.trim_start().strip_prefix('"')?;
        rest.split_once('"').map(|(name, _)| name)
    })
}

/// Reads an encoded `FileDescriptorSet` through the spec model (without source info, every
/// field's presence is unknown).
///
/// # Errors
///
/// When the file cannot be read, is not a descriptor set, or its model has errors.
pub fn load_descriptor_set(schema: &mut Schema, file: &Path) -> Result<()> {
    let (model, pool) = load_model(file, &csikit_spec::LoadOptions::default())?;
    schema.add_model(file.display().to_string(), pool, &model, &release_label(file));
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

/// The wire type a field's values use.
pub fn field_wire_type(field: &FieldDescriptor) -> crate::wire::WireType {
    if field.is_group() { crate::wire::WireType::StartGroup } else { wire_type_of(&field.kind()) }
}

/// True for field types whose repeated form may be packed.
pub fn is_packable(kind: &Kind) -> bool {
    !matches!(kind, Kind::String | Kind::Bytes | Kind::Message(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_lists_the_facts_in_order_and_says_nothing_when_there_are_none() {
        let facts = FieldFacts {
            presence: Presence::Required,
            alpha: true,
            secret: true,
            size_limit: SizeLimit::MaxTotal { bytes: 4096 },
            non_negative: true,
            ..NO_FIELD_FACTS.clone()
        };
        assert_eq!(
            note(&facts, true),
            "REQUIRED, alpha, secret, redacted, max 4096 bytes in total, non-negative"
        );
        assert_eq!(
            note(&facts, false),
            "REQUIRED, alpha, secret, max 4096 bytes in total, non-negative"
        );
        let limit =
            FieldFacts { size_limit: SizeLimit::AtLeast { bytes: 128 }, ..NO_FIELD_FACTS.clone() };
        assert_eq!(note(&limit, false), "no max, at least 128 bytes accepted");
        assert!(!Note { facts: &limit, redacted: false }.is_empty());
        assert_eq!(note(&NO_FIELD_FACTS, false), "");
        assert!(Note { facts: &NO_FIELD_FACTS, redacted: true }.is_empty());
    }

    #[test]
    fn built_in_pools_lose_only_their_source_info() {
        let schema = Schema::builtin().expect("built in");
        for (pool, table) in schema.pools().zip(schema.facts_tables()) {
            let ours = schema.pools.iter().find(|p| std::ptr::eq(p.get(), pool)).expect("pool");
            let full = DescriptorPool::decode(ours.embedded).expect("the embedded set decodes");
            // Besides what an older release named and this one reserved (csi.v1's
            // VolumeCondition, put back for `volume_condition`: `former`).
            let put_back = ours.restored().map_or(0, |r| r.types.len());
            assert_eq!(put_back, usize::from(table.package == "csi.v1"), "{}", table.package);
            assert!(pool.files().count() > 0, "{}", table.package);
            assert_eq!(
                pool.file_descriptor_protos()
                    .map(|f| (f.name().to_owned(), f.options.clone()))
                    .collect::<Vec<_>>(),
                full.file_descriptor_protos()
                    .map(|f| (f.name().to_owned(), f.options.clone()))
                    .collect::<Vec<_>>()
            );
            assert_eq!(pool.all_messages().count(), full.all_messages().count() + put_back);
            assert!(pool.file_descriptor_protos().all(|f| f.source_code_info.is_none()));
            assert!(full.file_descriptor_protos().any(|f| f.source_code_info.is_some()));
        }
        // Custom options (csi_secret) survive, read through the pool.
        let field = schema
            .find_message("csi.v1.CreateVolumeRequest")
            .and_then(|m| m.get_field_by_name("secrets").ok_or_else(|| anyhow::anyhow!("no field")))
            .expect("field");
        assert!(field.options().extensions().any(|(e, _)| e.name() == "csi_secret"));
    }
}
