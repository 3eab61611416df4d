//! GLB containers assembled by hand, for tests that write their own glTF JSON (and
//! tests of what the loader makes of lying chunk lengths).
#![allow(dead_code)]

/// A GLB whose JSON chunk is `json` and whose BIN chunk is `bin` (each padded to four
/// bytes), the total and BIN lengths as claimed (`None`: the true ones; tests of the
/// loader lie in them).
pub fn glb(json: &[u8], bin: &[u8], total_claim: Option<u32>, bin_claim: Option<u32>) -> Vec<u8> {
    let mut j = json.to_vec();
    while j.len() % 4 != 0 {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while b.len() % 4 != 0 {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + 8 + b.len();
    let mut out = Vec::new();
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&total_claim.unwrap_or(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    out.extend_from_slice(&bin_claim.unwrap_or(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&b);
    out
}
