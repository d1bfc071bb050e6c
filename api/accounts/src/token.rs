//! The API token format, its checksum and its stored hash.
//!
//! A token is `optx_` + 43 base62 characters (32 bytes of OS randomness, 256 bits) + 6 base62
//! characters of checksum (CRC-32 of the secret part), 54 characters in all — the shape GitHub
//! uses for its tokens. The fixed prefix lets secret scanners and people recognise it; the
//! checksum rejects a mistyped or truncated token without touching the store.
//!
//! Only the SHA-256 of the whole token is stored. A slow password hash (argon2) is not needed
//! here and would be wrong: the secret has 256 bits of entropy, so the digest cannot be brute
//! forced, while argon2 would cost tens of milliseconds and megabytes per request and, being
//! salted, could not be found by an index lookup. The lookup is by digest, and the digest read
//! back is compared again in constant time ([`TokenHash::ct_eq`]).

use std::fmt;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The fixed service prefix of every API token.
pub const TOKEN_PREFIX: &str = "optx_";
/// Random bytes behind the secret part.
pub const SECRET_BYTES: usize = 32;
/// Base62 characters of the secret part (62^43 > 2^256, so 32 bytes always fit).
pub const SECRET_CHARS: usize = 43;
/// Base62 characters of the checksum (62^6 > 2^32).
pub const CHECKSUM_CHARS: usize = 6;
/// Length of a whole token.
pub const TOKEN_LEN: usize = TOKEN_PREFIX.len() + SECRET_CHARS + CHECKSUM_CHARS;
/// Secret characters kept in the display prefix (`optx_` + 4): 24 bits, enough to tell
/// tokens apart in a list, far too few to matter for the 256-bit secret.
pub const DISPLAY_SECRET_CHARS: usize = 4;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Why a string is not a well-formed token. Callers answer every case with the same 401; the
/// variants exist for tests and the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenFormatError {
    /// Not `TOKEN_LEN` characters.
    #[error("a token has {TOKEN_LEN} characters")]
    Length,
    /// Does not start with [`TOKEN_PREFIX`].
    #[error("a token starts with {TOKEN_PREFIX}")]
    Prefix,
    /// A character outside `[0-9A-Za-z]` after the prefix.
    #[error("a token has only letters and digits after its prefix")]
    Alphabet,
    /// The checksum does not match the secret: a typo or a truncated copy.
    #[error("the token's checksum does not match (mistyped or truncated)")]
    Checksum,
}

/// The operating system's random source failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the operating system's random source failed")]
pub struct RandomnessUnavailable;

/// `n` bytes from the operating system's random source.
pub fn os_random<const N: usize>() -> Result<[u8; N], RandomnessUnavailable> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|_| RandomnessUnavailable)?;
    Ok(bytes)
}

/// A whole API token. Its `Debug` shows the display prefix only; the secret leaves this type
/// only through [`ApiToken::expose`] (to be shown once to its owner).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiToken(String);

impl ApiToken {
    /// A fresh token from 32 bytes of OS randomness.
    pub fn generate() -> Result<Self, RandomnessUnavailable> {
        Ok(Self::from_secret_bytes(&os_random::<SECRET_BYTES>()?))
    }

    /// The token for the given secret bytes (deterministic; tests and reference vectors).
    pub fn from_secret_bytes(secret: &[u8; SECRET_BYTES]) -> Self {
        let secret_chars = base62_fixed(secret, SECRET_CHARS);
        let checksum = base62_fixed(
            &checksum_of(secret_chars.as_bytes()).to_be_bytes(),
            CHECKSUM_CHARS,
        );
        Self(format!("{TOKEN_PREFIX}{secret_chars}{checksum}"))
    }

    /// Checks the shape and checksum of a presented token, without any lookup.
    pub fn parse(presented: &str) -> Result<Self, TokenFormatError> {
        if presented.len() != TOKEN_LEN {
            return Err(TokenFormatError::Length);
        }
        let Some(rest) = presented.strip_prefix(TOKEN_PREFIX) else {
            return Err(TokenFormatError::Prefix);
        };
        if !rest.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(TokenFormatError::Alphabet);
        }
        // Length and alphabet are checked, so the split is on an ASCII boundary.
        let (secret_chars, checksum) = rest.split_at(SECRET_CHARS);
        let expected = base62_fixed(
            &checksum_of(secret_chars.as_bytes()).to_be_bytes(),
            CHECKSUM_CHARS,
        );
        if expected.as_bytes() != checksum.as_bytes() {
            return Err(TokenFormatError::Checksum);
        }
        Ok(Self(presented.to_owned()))
    }

    /// The whole token: show it once to its owner, never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// SHA-256 of the whole token: the only form the store keeps.
    pub fn hash(&self) -> TokenHash {
        TokenHash::of(self.0.as_bytes())
    }

    /// `optx_` and the first secret characters, for lists and the usage page.
    pub fn display_prefix(&self) -> String {
        self.0[..TOKEN_PREFIX.len() + DISPLAY_SECRET_CHARS].to_owned()
    }
}

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiToken({}…<redacted>)", self.display_prefix())
    }
}

/// The CRC-32 (IEEE) of the secret characters: catches every single-character typo and every
/// truncation, which is all a checksum is for here.
fn checksum_of(secret_chars: &[u8]) -> u32 {
    crc32fast::hash(secret_chars)
}

/// `bytes` as a big-endian number written in exactly `width` base62 digits (zero-padded).
/// The caller picks `width` with 62^width > 256^len, so nothing is lost.
pub fn base62_fixed(bytes: &[u8], width: usize) -> String {
    let mut number = bytes.to_vec();
    let mut digits = vec![b'0'; width];
    for slot in digits.iter_mut().rev() {
        // Long division of the big-endian number by 62; the remainder is the next digit.
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let value = (remainder << 8) | u32::from(*byte);
            *byte = (value / 62) as u8;
            remainder = value % 62;
        }
        *slot = BASE62[remainder as usize];
    }
    // Every digit is from the ASCII alphabet above.
    digits.into_iter().map(char::from).collect()
}

/// A SHA-256 digest of a token or session secret. Comparisons go through [`TokenHash::ct_eq`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash(pub [u8; 32]);

impl TokenHash {
    /// SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    /// Constant-time equality: the time taken does not depend on where the digests differ.
    pub fn ct_eq(&self, other: &Self) -> bool {
        self.0.ct_eq(&other.0).into()
    }

    /// Reads a digest from a stored blob; `None` when it is not 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        <[u8; 32]>::try_from(bytes).ok().map(Self)
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The digest is not secret, but nothing needs it in a log line.
        f.write_str("TokenHash(..)")
    }
}

/// A random public id with `prefix` (`tok_` + 12 base62 characters, 71 bits): unique, not a
/// secret, used to name tokens in URLs and lists.
pub fn random_public_id(prefix: &str) -> Result<String, RandomnessUnavailable> {
    let bytes = os_random::<9>()?;
    Ok(format!("{prefix}{}", base62_fixed(&bytes, 12)))
}

/// A 43-character base62 secret from 32 bytes of OS randomness (session cookies).
pub fn random_secret() -> Result<String, RandomnessUnavailable> {
    Ok(base62_fixed(&os_random::<SECRET_BYTES>()?, SECRET_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base62_matches_an_independent_conversion() {
        // u128 arithmetic is an independent check for inputs of up to 16 bytes.
        for value in [0u128, 1, 61, 62, 3843, 3844, u64::MAX as u128, u128::MAX] {
            let mut expected = String::new();
            let mut rest = value;
            for _ in 0..22 {
                expected.insert(0, BASE62[(rest % 62) as usize] as char);
                rest /= 62;
            }
            assert_eq!(base62_fixed(&value.to_be_bytes(), 22), expected, "{value}");
        }
    }

    #[test]
    fn a_generated_token_parses_and_keeps_its_shape() {
        let token = ApiToken::generate().unwrap();
        let text = token.expose();
        assert_eq!(text.len(), TOKEN_LEN);
        assert!(text.starts_with(TOKEN_PREFIX));
        assert_eq!(ApiToken::parse(text).unwrap(), token);
        assert_eq!(ApiToken::parse(text).unwrap().hash(), token.hash());
        assert_ne!(ApiToken::generate().unwrap(), token);
    }

    #[test]
    fn the_all_ones_secret_fits_in_43_digits() {
        let token = ApiToken::from_secret_bytes(&[0xFF; 32]);
        assert!(ApiToken::parse(token.expose()).is_ok());
    }

    #[test]
    fn every_single_character_typo_fails_the_checksum() {
        let token = ApiToken::from_secret_bytes(&[7; 32]);
        let text = token.expose().to_owned();
        for index in TOKEN_PREFIX.len()..TOKEN_LEN {
            let mut bytes = text.clone().into_bytes();
            bytes[index] = if bytes[index] == b'a' { b'b' } else { b'a' };
            let typo = String::from_utf8(bytes).unwrap();
            assert_eq!(
                ApiToken::parse(&typo),
                Err(TokenFormatError::Checksum),
                "{index}"
            );
        }
    }

    #[test]
    fn malformed_tokens_say_why() {
        let text = ApiToken::from_secret_bytes(&[1; 32]).expose().to_owned();
        assert_eq!(
            ApiToken::parse(&text[..TOKEN_LEN - 1]),
            Err(TokenFormatError::Length)
        );
        assert_eq!(
            ApiToken::parse(&text.replacen("optx_", "optz_", 1)),
            Err(TokenFormatError::Prefix)
        );
        assert_eq!(
            ApiToken::parse(&text.replacen("optx_", "optx-", 1)),
            Err(TokenFormatError::Prefix)
        );
        let mut bad = text.into_bytes();
        bad[10] = b'-';
        assert_eq!(
            ApiToken::parse(std::str::from_utf8(&bad).unwrap()),
            Err(TokenFormatError::Alphabet)
        );
        assert_eq!(ApiToken::parse(""), Err(TokenFormatError::Length));
        // A multibyte character of the right byte length is rejected, not split.
        let odd = format!(
            "{TOKEN_PREFIX}é{}",
            "a".repeat(TOKEN_LEN - TOKEN_PREFIX.len() - 2)
        );
        assert_eq!(odd.len(), TOKEN_LEN);
        assert_eq!(ApiToken::parse(&odd), Err(TokenFormatError::Alphabet));
    }

    #[test]
    fn the_hash_is_sha256_of_the_whole_token() {
        // SHA-256("abc") from FIPS 180-2, appendix B.1.
        let digest = TokenHash::of(b"abc");
        let hex: String = digest.0.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let token = ApiToken::from_secret_bytes(&[3; 32]);
        assert_eq!(token.hash(), TokenHash::of(token.expose().as_bytes()));
        assert!(token.hash().ct_eq(&token.hash()));
        assert!(!token.hash().ct_eq(&digest));
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let token = ApiToken::from_secret_bytes(&[9; 32]);
        let shown = format!("{token:?}");
        assert!(shown.contains(&token.display_prefix()));
        assert!(!shown.contains(&token.expose()[TOKEN_PREFIX.len() + DISPLAY_SECRET_CHARS..]));
        assert_eq!(format!("{:?}", token.hash()), "TokenHash(..)");
    }

    #[test]
    fn public_ids_have_their_prefix_and_differ() {
        let a = random_public_id("tok_").unwrap();
        let b = random_public_id("tok_").unwrap();
        assert_eq!(a.len(), 16);
        assert!(a.starts_with("tok_"));
        assert_ne!(a, b);
        assert_eq!(random_secret().unwrap().len(), SECRET_CHARS);
    }
}
