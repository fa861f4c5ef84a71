//! Why generation failed: the one error type every generator returns, below them all.

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The encoded descriptor set given with a package does not decode.
    #[error("descriptor set of '{package}' does not decode: {source}")]
    Descriptor {
        /// The proto package.
        package: String,
        /// The decode error.
        source: prost::DecodeError,
    },
    /// The descriptor set does not contain the file the model was built from.
    #[error("descriptor set of '{package}' has no file '{file}'")]
    MissingFile {
        /// The proto package.
        package: String,
        /// The import name looked for.
        file: String,
    },
    /// prost-build refused the descriptors.
    #[error("prost-build failed on '{package}': {source}")]
    ProstBuild {
        /// The proto package.
        package: String,
        /// The error prost-build gave.
        source: std::io::Error,
    },
}
