//! A bounds-checked reader of glTF accessors.
//!
//! The gltf crate's own reader trusts the file (it panics on a `byteStride` smaller than
//! the element, and reads indices of any component type); this one checks every offset,
//! stride and count against the buffers before it allocates or reads, so a file's claims
//! can never make it allocate more than the data it actually has.

use gltf::accessor::{DataType, Dimensions};

use super::LoadError;

/// The most elements a sparse accessor without a buffer view may claim (its zeros are
/// not in the file, so the file's size does not bound them): 2^22 VEC3 = 48 MiB.
pub(crate) const MAX_VIEWLESS_ELEMENTS: usize = 1 << 22;

/// Component types an index accessor may have.
pub(crate) enum IndexData {
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
}

pub(crate) struct AccessorReader<'a> {
    pub(crate) buffers: &'a [gltf::buffer::Data],
}

fn component_size(t: DataType) -> usize {
    match t {
        DataType::I8 | DataType::U8 => 1,
        DataType::I16 | DataType::U16 => 2,
        DataType::U32 | DataType::F32 => 4,
    }
}

impl AccessorReader<'_> {
    fn err(accessor: &gltf::Accessor, used_by: &str, reason: impl Into<String>) -> LoadError {
        LoadError::Accessor {
            accessor: accessor.index(),
            used_by: used_by.to_string(),
            reason: reason.into(),
        }
    }

    /// The bytes of `count` elements of `elem_size` bytes, as `(slice, stride)`, after
    /// checking they lie inside the buffer view and the view inside its buffer.
    fn view_bytes<'b>(
        &'b self,
        view: &gltf::buffer::View,
        offset: usize,
        count: usize,
        elem_size: usize,
        stride_allowed: bool,
        what: &dyn Fn(String) -> LoadError,
    ) -> Result<(&'b [u8], usize), LoadError> {
        let buffer = self
            .buffers
            .get(view.buffer().index())
            .ok_or_else(|| what(format!("buffer {} was not loaded", view.buffer().index())))?;
        let view_end = view
            .offset()
            .checked_add(view.length())
            .filter(|&e| e <= buffer.len())
            .ok_or_else(|| {
                what(format!(
                    "buffer view {} (bytes {}..+{}) lies past the end of buffer {} ({} bytes)",
                    view.index(),
                    view.offset(),
                    view.length(),
                    view.buffer().index(),
                    buffer.len()
                ))
            })?;
        let view_bytes = &buffer[view.offset()..view_end];
        let stride = match view.stride() {
            Some(s) if stride_allowed => s,
            Some(_) => {
                return Err(what(
                    "index data must be tightly packed (no byteStride)".into(),
                ))
            }
            None => elem_size,
        };
        if stride < elem_size {
            return Err(what(format!(
                "byteStride {stride} is smaller than the element ({elem_size} bytes)"
            )));
        }
        if count == 0 {
            return Ok((&[], stride));
        }
        let needed = (count - 1)
            .checked_mul(stride)
            .and_then(|n| n.checked_add(elem_size))
            .and_then(|n| n.checked_add(offset));
        match needed {
            Some(n) if n <= view_bytes.len() => Ok((&view_bytes[offset..n], stride)),
            _ => Err(what(format!(
                "{count} elements of {elem_size} bytes (stride {stride}) from byte {offset} do not fit in buffer view {} ({} bytes)",
                view.index(),
                view_bytes.len()
            ))),
        }
    }

    /// Reads a FLOAT VEC3 accessor (positions), sparse substitution included.
    pub(crate) fn read_vec3(
        &self,
        accessor: &gltf::Accessor,
        used_by: &str,
    ) -> Result<Vec<[f32; 3]>, LoadError> {
        if accessor.dimensions() != Dimensions::Vec3 || accessor.data_type() != DataType::F32 {
            return Err(LoadError::Unsupported(format!(
                "{used_by} (accessor {}) is {:?} of {:?}; positions must be FLOAT VEC3 (quantized positions, KHR_mesh_quantization, are not supported)",
                accessor.index(),
                accessor.dimensions(),
                accessor.data_type()
            )));
        }
        let count = accessor.count();
        let what = |r: String| Self::err(accessor, used_by, r);
        let mut out = match accessor.view() {
            Some(view) => {
                let (bytes, stride) =
                    self.view_bytes(&view, accessor.offset(), count, 12, true, &what)?;
                let mut out = Vec::with_capacity(count);
                for i in 0..count {
                    let e = &bytes[i * stride..i * stride + 12];
                    out.push(std::array::from_fn(|k| {
                        f32::from_le_bytes([e[4 * k], e[4 * k + 1], e[4 * k + 2], e[4 * k + 3]])
                    }));
                }
                out
            }
            None if accessor.sparse().is_some() => {
                // No view: zeros, then the sparse values. Nothing in the file backs the
                // count, so cap what it may make us allocate.
                if count > MAX_VIEWLESS_ELEMENTS {
                    return Err(what(format!(
                        "count {count} with no buffer view behind it (at most {MAX_VIEWLESS_ELEMENTS} allowed)"
                    )));
                }
                vec![[0.0; 3]; count]
            }
            None => return Err(what("has neither a buffer view nor sparse data".into())),
        };
        if let Some(sparse) = accessor.sparse() {
            let indices = self.read_sparse_indices(accessor, &sparse, used_by)?;
            let values = sparse.values();
            let (bytes, stride) = self.view_bytes(
                &values.view(),
                values.offset(),
                indices.len(),
                12,
                false,
                &what,
            )?;
            for (k, &i) in indices.iter().enumerate() {
                let e = &bytes[k * stride..k * stride + 12];
                let slot = out.get_mut(i as usize).ok_or_else(|| {
                    what(format!(
                        "sparse index {i} is past the accessor count {count}"
                    ))
                })?;
                *slot = std::array::from_fn(|c| {
                    f32::from_le_bytes([e[4 * c], e[4 * c + 1], e[4 * c + 2], e[4 * c + 3]])
                });
            }
        }
        Ok(out)
    }

    fn read_sparse_indices(
        &self,
        accessor: &gltf::Accessor,
        sparse: &gltf::accessor::sparse::Sparse,
        used_by: &str,
    ) -> Result<Vec<u32>, LoadError> {
        let what = |r: String| Self::err(accessor, used_by, r);
        let idx = sparse.indices();
        let size = match idx.index_type() {
            gltf::accessor::sparse::IndexType::U8 => 1,
            gltf::accessor::sparse::IndexType::U16 => 2,
            gltf::accessor::sparse::IndexType::U32 => 4,
        };
        let (bytes, _) = self.view_bytes(
            &idx.view(),
            idx.offset(),
            sparse.count(),
            size,
            false,
            &what,
        )?;
        Ok(bytes.chunks_exact(size).map(le_u32).collect())
    }

    /// Reads an index accessor: SCALAR of UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT.
    pub(crate) fn read_indices(
        &self,
        accessor: &gltf::Accessor,
        used_by: &str,
    ) -> Result<IndexData, LoadError> {
        let what = |r: String| Self::err(accessor, used_by, r);
        if accessor.dimensions() != Dimensions::Scalar {
            return Err(what(format!(
                "indices must be SCALAR, not {:?}",
                accessor.dimensions()
            )));
        }
        let t = accessor.data_type();
        if !matches!(t, DataType::U8 | DataType::U16 | DataType::U32) {
            return Err(what(format!(
                "indices must be UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT, not {t:?}"
            )));
        }
        if accessor.sparse().is_some() {
            // Legal but unheard of; keep the reader simple and say so.
            return Err(LoadError::Unsupported(format!(
                "{used_by}: sparse index accessors are not supported"
            )));
        }
        let view = accessor
            .view()
            .ok_or_else(|| what("index accessor has no buffer view".into()))?;
        let size = component_size(t);
        let count = accessor.count();
        let (bytes, stride) =
            self.view_bytes(&view, accessor.offset(), count, size, true, &what)?;
        let element = |i: usize| &bytes[i * stride..i * stride + size];
        Ok(match t {
            DataType::U8 => IndexData::U8((0..count).map(|i| element(i)[0]).collect()),
            DataType::U16 => IndexData::U16(
                (0..count)
                    .map(|i| {
                        let e = element(i);
                        u16::from_le_bytes([e[0], e[1]])
                    })
                    .collect(),
            ),
            _ => IndexData::U32((0..count).map(|i| le_u32(element(i))).collect()),
        })
    }
}

fn le_u32(c: &[u8]) -> u32 {
    match *c {
        [a] => u32::from(a),
        [a, b] => u32::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    }
}
