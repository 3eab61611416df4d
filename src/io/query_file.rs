//! The batch query file format of `QUERY_FORMAT.md`: a text file of segments, polytopes
//! and balls in the world space of a glTF scene, answered in one batch, one JSON line
//! per query. The `query` example is a command line around this module.
//!
//! ```text
//! seg    x0 y0 z0  x1 y1 z1                 # line segment start -> end
//! poly   N  a1 b1 c1 d1  ...  aN bN cN dN   # convex polytope, a·x + b·y + c·z + d >= 0 inside
//! sphere cx cy cz r                         # solid ball
//! ```
//!
//! * [`parse_query_file`] reads the text: one [`QueryLine`] per line that holds a query
//!   (`#` starts a comment; blank lines are not queries). A line that cannot be a query
//!   (a word that is not a number, a wrong count of numbers, an unknown kind, or numbers
//!   the intersectors refuse: non-finite, a zero-length segment, a negative radius, a
//!   plane with a zero normal, no planes or more than 64) keeps its error, which names
//!   the line; the other queries are still answered.
//! * [`answer_query_lines`] answers every valid query against a loaded scene through
//!   [`IntersectionVisitor::map_batch`], one kind of query at a time, on the current
//!   rayon pool, keeping only the triangles hit (points and lines do not count here).
//! * [`result_line`] writes a query's JSON line: `seg` hits sorted by ratio, with the
//!   world point; `poly` and `sphere` hits as the distinct (drawable, triangle) pairs
//!   sorted by drawable name, then triangle. A drawable is named `n<node>/p<primitive>`
//!   after the glTF node holding the mesh and the primitive's place in the mesh
//!   ([`GltfImport::drawable_name_parts`]).
//!
//! Numbers are written as Rust writes `f64` (the shortest text that reads back to the
//! same number), so results can be diffed between runs bit for bit.
//!
//! ```
//! use scene_intersect::io::query_file::{parse_query_file, BatchQuery};
//!
//! let lines = parse_query_file("seg 0 1 0  0 -1 0 # down\n\nsphere 0 0 0 -2\npoly 1 0 1 0 oops\n");
//! assert_eq!(lines.len(), 3);
//! assert_eq!(lines[0].line, 1);
//! assert!(matches!(lines[0].query, Ok(BatchQuery::Segment { .. })));
//! let errors: Vec<String> = lines[1..]
//!     .iter()
//!     .map(|l| l.query.as_ref().unwrap_err().to_string())
//!     .collect();
//! assert_eq!(errors, [
//!     "line 3: the sphere radius -2 is negative",
//!     "line 4: `oops` is not a number",
//! ]);
//! ```

use std::fmt::Write as _;

use glam::{DVec3, DVec4};
use thiserror::Error;

use super::gltf_loader::batch_drawable_name;
use super::GltfImport;
use crate::graph::{NodeId, SceneGraph};
use crate::intersectors::{
    HitRecords, LineSegmentIntersector, Polytope, PolytopeIntersector, PrimitiveKind,
    PrimitiveMask, QueryError, SphereIntersector,
};
use crate::visitor::{IntersectionVisitor, Intersector};

/// One query of a batch query file, with numbers the intersectors accept.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchQuery {
    /// `seg`: every triangle the segment from `start` to `end` crosses.
    Segment {
        /// Where the segment starts (ratio 0).
        start: DVec3,
        /// Where it ends (ratio 1).
        end: DVec3,
    },
    /// `poly`: every triangle meeting the convex polytope `a·x + b·y + c·z + d >= 0` for
    /// every plane `(a, b, c, d)` (normals point inward).
    Polytope {
        /// The polytope, made once when the line is read (its
        /// [`planes`](Polytope::planes) as the file gives them; boxed, as it is ten times
        /// the size of the other queries).
        polytope: Box<Polytope>,
    },
    /// `sphere`: every triangle meeting the solid ball.
    Sphere {
        /// The ball's centre.
        center: DVec3,
        /// Its radius (zero is a point).
        radius: f64,
    },
}

/// The query as a line of a query file (no comment, no line end): parsed again, it gives
/// the same query, bit for bit (numbers are written as Rust's `{:?}` writes `f64`: the
/// shortest text that reads back to them, with an exponent when very large or small).
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::io::query_file::{parse_query_file, BatchQuery};
///
/// let ball = BatchQuery::Sphere { center: DVec3::new(0.1, -2.0, 1e-300), radius: 0.5 };
/// assert_eq!(ball.to_string(), "sphere 0.1 -2.0 1e-300 0.5");
/// assert_eq!(parse_query_file(&ball.to_string())[0].query, Ok(ball));
/// ```
impl std::fmt::Display for BatchQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchQuery::Segment { start: a, end: b } => {
                write!(
                    f,
                    "seg {:?} {:?} {:?} {:?} {:?} {:?}",
                    a.x, a.y, a.z, b.x, b.y, b.z
                )
            }
            BatchQuery::Polytope { polytope } => {
                let planes = polytope.planes();
                write!(f, "poly {}", planes.len())?;
                for p in planes {
                    write!(f, " {:?} {:?} {:?} {:?}", p.x, p.y, p.z, p.w)?;
                }
                Ok(())
            }
            BatchQuery::Sphere { center: c, radius } => {
                write!(f, "sphere {:?} {:?} {:?} {radius:?}", c.x, c.y, c.z)
            }
        }
    }
}

/// A line of a query file that holds a query (or what is wrong with it).
#[derive(Debug, Clone, PartialEq)]
pub struct QueryLine {
    /// The line's number in the file, from 1.
    pub line: usize,
    /// The query, or why the line is not one.
    pub query: Result<BatchQuery, QueryLineError>,
}

/// Why a line of a query file is not a query, or why its query was not answered. Every
/// message names the line.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum QueryLineError {
    /// A word after the kind is not a number.
    #[error("line {line}: `{word}` is not a number")]
    NotANumber {
        /// The line's number.
        line: usize,
        /// The word.
        word: String,
    },
    /// The kind is not `seg`, `poly` or `sphere` (they are lower case).
    #[error("line {line}: unknown query kind `{kind}` (expected seg, poly or sphere)")]
    UnknownKind {
        /// The line's number.
        line: usize,
        /// The first word of the line.
        kind: String,
    },
    /// `poly` without a plane count.
    #[error("line {line}: `poly` needs a plane count, then four numbers per plane")]
    MissingPlaneCount {
        /// The line's number.
        line: usize,
    },
    /// A plane count that is not a whole number of planes.
    #[error("line {line}: the plane count `{count}` is not a whole number of planes")]
    BadPlaneCount {
        /// The line's number.
        line: usize,
        /// The count as read.
        count: f64,
    },
    /// Too few or too many numbers for the kind (for `poly`, for its plane count).
    #[error("line {line}: `{kind}` takes {expected} numbers, found {found}")]
    WrongCount {
        /// The line's number.
        line: usize,
        /// `seg`, `poly` or `sphere`.
        kind: &'static str,
        /// How many numbers the kind takes.
        expected: usize,
        /// How many the line gives.
        found: usize,
    },
    /// The numbers make no query the intersectors accept (non-finite, a zero-length
    /// segment, a negative radius, a plane with a zero normal, no or too many planes).
    #[error("line {line}: {source}")]
    Invalid {
        /// The line's number.
        line: usize,
        /// What the intersector refused.
        source: QueryError,
    },
}

/// Every query of a query file, in order: one [`QueryLine`] per line that is not blank
/// once its comment (from `#`) is cut off. Lines are split on whitespace (spaces and tabs
/// alike). Never fails: a line that is not a valid query keeps its error (see the
/// module docs). A byte order mark before the first line (as some Windows editors
/// write) is skipped.
pub fn parse_query_file(text: &str) -> Vec<QueryLine> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .enumerate()
        .filter_map(|(i, raw)| {
            let content = raw.split('#').next().unwrap_or("");
            let words: Vec<&str> = content.split_whitespace().collect();
            let (kind, numbers) = words.split_first()?;
            let line = i + 1;
            Some(QueryLine {
                line,
                query: parse_query(kind, numbers, line),
            })
        })
        .collect()
}

/// The query of one line: its kind and the words after it.
fn parse_query(kind: &str, words: &[&str], line: usize) -> Result<BatchQuery, QueryLineError> {
    let numbers = words
        .iter()
        .map(|&word| {
            word.parse::<f64>().map_err(|_| QueryLineError::NotANumber {
                line,
                word: word.to_owned(),
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    let count = |kind: &'static str, expected: usize| {
        if numbers.len() == expected {
            Ok(())
        } else {
            Err(QueryLineError::WrongCount {
                line,
                kind,
                expected,
                found: numbers.len(),
            })
        }
    };
    let invalid = |source| QueryLineError::Invalid { line, source };
    let query = match kind {
        "seg" => {
            count("seg", 6)?;
            let start = DVec3::new(numbers[0], numbers[1], numbers[2]);
            let end = DVec3::new(numbers[3], numbers[4], numbers[5]);
            LineSegmentIntersector::new(start, end).map_err(invalid)?;
            BatchQuery::Segment { start, end }
        }
        "sphere" => {
            count("sphere", 4)?;
            let center = DVec3::new(numbers[0], numbers[1], numbers[2]);
            let radius = numbers[3];
            SphereIntersector::new(center, radius).map_err(invalid)?;
            BatchQuery::Sphere { center, radius }
        }
        "poly" => {
            let &planes = numbers
                .first()
                .ok_or(QueryLineError::MissingPlaneCount { line })?;
            if !(planes >= 0.0 && planes.fract() == 0.0) {
                return Err(QueryLineError::BadPlaneCount {
                    line,
                    count: planes,
                });
            }
            // (A count too large for the line cannot match it: saturated, it still
            // cannot.)
            count(
                "poly",
                (planes as usize).saturating_mul(4).saturating_add(1),
            )?;
            let planes = numbers[1..]
                .chunks_exact(4)
                .map(|c| DVec4::new(c[0], c[1], c[2], c[3]));
            let polytope = Box::new(Polytope::new(planes).map_err(invalid)?);
            BatchQuery::Polytope { polytope }
        }
        other => {
            return Err(QueryLineError::UnknownKind {
                line,
                kind: other.to_owned(),
            })
        }
    };
    Ok(query)
}

/// The drawable a hit is in, by the numbers of its batch name `n<node>/p<primitive>`
/// (`None` for a drawable the glTF file did not make).
pub type DrawableNameParts = Option<(usize, usize)>;

/// A triangle a segment crossed.
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentRow {
    /// Where along the segment, from 0 (start) to 1 (end).
    pub ratio: f64,
    /// The drawable.
    pub drawable: DrawableNameParts,
    /// The triangle's primitive index in the drawable.
    pub triangle: u32,
    /// The crossing in world space.
    pub point: DVec3,
}

/// A triangle a polytope or ball met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TriangleRow {
    /// The drawable.
    pub drawable: DrawableNameParts,
    /// The triangle's primitive index in the drawable.
    pub triangle: u32,
}

/// What a batch keeps of an answered query: the triangles hit, as numbers (names and
/// JSON are made by [`result_line`], after a timed batch).
#[derive(Debug, Clone, PartialEq)]
pub enum BatchAnswer {
    /// A `seg` query's hits, in the order the traversal found them.
    Segment(Vec<SegmentRow>),
    /// A `poly` query's hits.
    Polytope(Vec<TriangleRow>),
    /// A `sphere` query's hits.
    Sphere(Vec<TriangleRow>),
}

/// Answers every valid query of `lines` against `scene` under `import.root`, with
/// `visitor`'s settings (acceleration on or off, masks), in parallel on the current
/// rayon pool: one answer per line, in order; a line's parse error is its answer.
///
/// Each kind goes through [`IntersectionVisitor::map_batch`]: a worker moves one
/// intersector from query to query and keeps only the triangles hit, answered as
/// unsorted summaries ([`HitRecords::UnsortedSummaries`]): no full hit record is built
/// and no hit list sorted ([`result_line`] puts each line's rows in order).
pub fn answer_query_lines(
    visitor: &IntersectionVisitor,
    scene: &SceneGraph,
    import: &GltfImport,
    lines: &[QueryLine],
) -> Vec<Result<BatchAnswer, QueryLineError>> {
    let named = |path: &[NodeId], drawable| import.drawable_name_parts(path, drawable);
    let row = |path: &[NodeId], drawable, triangle| TriangleRow {
        drawable: named(path, drawable),
        triangle,
    };
    let batch = Batch {
        visitor,
        scene,
        root: import.root,
        lines,
    };
    let segments = batch.answer(
        |query| match query {
            BatchQuery::Segment { start, end } => Some((*start, *end)),
            _ => None,
        },
        // Summaries, here and below: a row needs no more, and the full records were
        // ~18 % of an all-hits segment query, ~9 % of a box or ball query. Unsorted:
        // the rows are sorted their own way when the line is written (after the clock),
        // and the intersectors' sort was ~17 % of the boxes' and balls' instructions on
        // littlest_tokyo.
        |&(start, end)| {
            let picker = LineSegmentIntersector::new(start, end)?;
            Ok(picker.with_records(HitRecords::UnsortedSummaries))
        },
        |picker, &(start, end)| picker.set_segment(start, end),
        |answered| {
            let hits = answered.summaries();
            // Sized at once: collected from the filter, the rows grew by reallocating
            // (~450 instructions of a littlest_tokyo segment's ~26 000).
            let mut rows = Vec::with_capacity(hits.len());
            let triangles = hits.filter(|h| h.primitive_kind == PrimitiveKind::Triangle);
            rows.extend(triangles.map(|h| SegmentRow {
                ratio: h.ratio,
                drawable: named(h.node_path, h.drawable),
                triangle: h.primitive_index,
                point: h.world_point,
            }));
            BatchAnswer::Segment(rows)
        },
    );
    let polytopes = batch.answer(
        |query| match query {
            BatchQuery::Polytope { polytope } => Some(&**polytope),
            _ => None,
        },
        // The polytope is copied, not made again from its planes: what a box's planes
        // tell (its bounds) was found when the line was read.
        |polytope| {
            let query = PolytopeIntersector::new(Polytope::clone(polytope));
            Ok((query.with_primitive_mask(PrimitiveMask::TRIANGLES))
                .with_records(HitRecords::UnsortedSummaries))
        },
        |query, polytope| {
            query.set_polytope(Polytope::clone(polytope));
            Ok(())
        },
        |answered| {
            let hits = answered.summaries();
            BatchAnswer::Polytope(
                hits.map(|h| row(h.node_path, h.drawable, h.primitive_index))
                    .collect(),
            )
        },
    );
    let spheres = batch.answer(
        |query| match query {
            BatchQuery::Sphere { center, radius } => Some((*center, *radius)),
            _ => None,
        },
        |&(center, radius)| {
            let ball = SphereIntersector::new(center, radius)?;
            Ok((ball.with_primitive_mask(PrimitiveMask::TRIANGLES))
                .with_records(HitRecords::UnsortedSummaries))
        },
        |ball, &(center, radius)| ball.set_sphere(center, radius),
        |answered| {
            let hits = answered.summaries();
            BatchAnswer::Sphere(
                hits.map(|h| row(h.node_path, h.drawable, h.primitive_index))
                    .collect(),
            )
        },
    );
    // Each kind's answers are in line order: merged back by taking the next of the
    // line's kind.
    let (mut segments, mut polytopes, mut spheres) = (
        segments.into_iter(),
        polytopes.into_iter(),
        spheres.into_iter(),
    );
    lines
        .iter()
        .map(|l| {
            let answer = match &l.query {
                Err(e) => return Err(e.clone()),
                Ok(BatchQuery::Segment { .. }) => segments.next(),
                Ok(BatchQuery::Polytope { .. }) => polytopes.next(),
                Ok(BatchQuery::Sphere { .. }) => spheres.next(),
            };
            answer
                .expect("map_batch answers every query it is given")
                .map_err(|source| QueryLineError::Invalid {
                    line: l.line,
                    source,
                })
        })
        .collect()
}

/// What every kind of query is answered against.
struct Batch<'a> {
    visitor: &'a IntersectionVisitor,
    scene: &'a SceneGraph,
    root: NodeId,
    lines: &'a [QueryLine],
}

impl<'a> Batch<'a> {
    /// Answers the valid queries `pick` takes (one kind) through
    /// [`IntersectionVisitor::map_batch`] with `make`, `move_to` and `keep`: one answer
    /// (or the error the visitor gave) per query taken, in line order.
    fn answer<K: Sync, I: Intersector + Send>(
        &self,
        pick: impl Fn(&'a BatchQuery) -> Option<K>,
        make: impl Fn(&K) -> Result<I, QueryError> + Sync,
        move_to: impl Fn(&mut I, &K) -> Result<(), QueryError> + Sync,
        keep: impl Fn(&I) -> BatchAnswer + Sync,
    ) -> Vec<Result<BatchAnswer, QueryError>> {
        let picked: Vec<K> = (self.lines.iter())
            .filter_map(|l| pick(l.query.as_ref().ok()?))
            .collect();
        self.visitor
            .map_batch(self.scene, self.root, &picked, make, move_to, keep)
    }
}

/// The JSON line of query `q` (its place among the file's queries, from 0): its hits, or
/// `{"q":q,"error":"..."}`.
///
/// ```
/// use glam::DVec3;
/// use scene_intersect::io::query_file::{result_line, BatchAnswer, SegmentRow, TriangleRow};
///
/// let crossing = SegmentRow {
///     ratio: 0.25,
///     drawable: Some((12, 0)),
///     triangle: 345,
///     point: DVec3::new(1.0, -2.5, 0.0),
/// };
/// assert_eq!(
///     result_line(0, &Ok(BatchAnswer::Segment(vec![crossing]))),
///     r#"{"q":0,"kind":"seg","hits":[{"d":"n12/p0","tri":345,"ratio":0.25,"point":[1,-2.5,0]}]}"#
/// );
/// // Sorted by drawable name (as text), then triangle, each pair once.
/// let met = [(Some((3, 1)), 7), (Some((10, 0)), 2), (Some((3, 1)), 7)]
///     .map(|(drawable, triangle)| TriangleRow { drawable, triangle });
/// assert_eq!(
///     result_line(1, &Ok(BatchAnswer::Sphere(met.to_vec()))),
///     r#"{"q":1,"kind":"sphere","hits":[{"d":"n10/p0","tri":2},{"d":"n3/p1","tri":7}]}"#
/// );
/// ```
pub fn result_line(q: usize, answer: &Result<BatchAnswer, QueryLineError>) -> String {
    match answer {
        Ok(BatchAnswer::Segment(hits)) => segment_line(q, hits),
        Ok(BatchAnswer::Polytope(hits)) => set_line(q, "poly", hits),
        Ok(BatchAnswer::Sphere(hits)) => set_line(q, "sphere", hits),
        Err(e) => format!("{{\"q\":{q},\"error\":{}}}", json_string(&e.to_string())),
    }
}

/// The batch name of a drawable: `n<node>/p<primitive>`, `?` for one the file did not
/// make.
fn name(parts: DrawableNameParts) -> String {
    match parts {
        Some((node, primitive)) => batch_drawable_name(node, primitive),
        None => "?".into(),
    }
}

/// A `seg` line: every hit sorted by ratio (equal ratios by name, then triangle).
fn segment_line(q: usize, hits: &[SegmentRow]) -> String {
    let mut hits: Vec<(f64, String, u32, DVec3)> = hits
        .iter()
        .map(|h| (h.ratio, name(h.drawable), h.triangle, h.point))
        .collect();
    hits.sort_by(|x, y| {
        x.0.total_cmp(&y.0)
            .then_with(|| x.1.cmp(&y.1))
            .then(x.2.cmp(&y.2))
    });
    let mut out = format!("{{\"q\":{q},\"kind\":\"seg\",\"hits\":[");
    for (k, (ratio, d, tri, p)) in hits.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(
            out,
            "{sep}{{\"d\":{},\"tri\":{tri},\"ratio\":{ratio},\"point\":[{},{},{}]}}",
            json_string(d),
            p.x,
            p.y,
            p.z
        );
    }
    out.push_str("]}");
    out
}

/// A `poly` / `sphere` line: the distinct (drawable, triangle) pairs sorted by (name,
/// triangle).
fn set_line(q: usize, kind: &str, hits: &[TriangleRow]) -> String {
    let mut hits: Vec<(String, u32)> = hits
        .iter()
        .map(|h| (name(h.drawable), h.triangle))
        .collect();
    hits.sort();
    hits.dedup();
    let mut out = format!("{{\"q\":{q},\"kind\":\"{kind}\",\"hits\":[");
    for (k, (d, tri)) in hits.iter().enumerate() {
        let sep = if k > 0 { "," } else { "" };
        let _ = write!(out, "{sep}{{\"d\":{},\"tri\":{tri}}}", json_string(d));
    }
    out.push_str("]}");
    out
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(text: &str) -> String {
        let lines = parse_query_file(text);
        assert_eq!(lines.len(), 1, "{text:?} is one query line");
        match &lines[0].query {
            Err(e) => e.to_string(),
            Ok(q) => panic!("{text:?} parsed as {q:?}"),
        }
    }

    #[test]
    fn comments_blank_lines_and_tabs_are_not_queries() {
        let text = "# a comment\n\n   \t\nseg\t0 0 0\t1 1 1   # tabs\r\nsphere 1 2 3 0.5#r\n";
        let lines = parse_query_file(text);
        assert_eq!(
            lines,
            [
                QueryLine {
                    line: 4,
                    query: Ok(BatchQuery::Segment {
                        start: DVec3::ZERO,
                        end: DVec3::ONE,
                    }),
                },
                QueryLine {
                    line: 5,
                    query: Ok(BatchQuery::Sphere {
                        center: DVec3::new(1.0, 2.0, 3.0),
                        radius: 0.5,
                    }),
                },
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_kind() {
        let lines = parse_query_file("\u{feff}sphere 0 0 0 1\r\nseg 0 0 0 0 0 1\r\n");
        assert_eq!(
            lines.iter().map(|l| l.query.is_ok()).collect::<Vec<_>>(),
            [true, true]
        );
    }

    #[test]
    fn a_polytope_takes_four_numbers_per_plane() {
        let lines = parse_query_file("poly 2  0 1 0 0  0 -1 0 5.5\npoly 2.0 1 0 0 0 -1 0 0 3");
        let planes = |k: usize| match &lines[k].query {
            Ok(BatchQuery::Polytope { polytope }) => polytope.planes().to_vec(),
            other => panic!("line {k}: {other:?}"),
        };
        assert_eq!(
            planes(0),
            [
                DVec4::new(0.0, 1.0, 0.0, 0.0),
                DVec4::new(0.0, -1.0, 0.0, 5.5)
            ]
        );
        assert_eq!(
            planes(1),
            [
                DVec4::new(1.0, 0.0, 0.0, 0.0),
                DVec4::new(-1.0, 0.0, 0.0, 3.0)
            ]
        );
    }

    #[test]
    fn every_malformed_line_says_which_line_and_what_to_fix() {
        for (text, message) in [
            ("seg 0 0 0 1 1", "line 1: `seg` takes 6 numbers, found 5"),
            (
                "sphere 0 0 0 1 2",
                "line 1: `sphere` takes 4 numbers, found 5",
            ),
            ("seg 0 0 0 1 1 x", "line 1: `x` is not a number"),
            (
                "SEG 0 0 0 1 1 1",
                "line 1: unknown query kind `SEG` (expected seg, poly or sphere)",
            ),
            (
                "poly",
                "line 1: `poly` needs a plane count, then four numbers per plane",
            ),
            (
                "poly 1.5 0 1 0 0",
                "line 1: the plane count `1.5` is not a whole number of planes",
            ),
            (
                "poly -1",
                "line 1: the plane count `-1` is not a whole number of planes",
            ),
            (
                "poly nan",
                "line 1: the plane count `NaN` is not a whole number of planes",
            ),
            ("poly 2 0 1 0 0", "line 1: `poly` takes 9 numbers, found 5"),
            (
                "poly 1e30 0 1 0 0",
                "line 1: `poly` takes 18446744073709551615 numbers, found 5",
            ),
            (
                "poly 0",
                "line 1: the polytope has no planes; give at least one (a, b, c, d) plane",
            ),
            (
                "poly 1 0 0 0 1",
                "line 1: plane 0 of the polytope has a zero normal (a = b = c = 0) or one too \
                 small to normalize (its squared length underflows); scale the plane up",
            ),
            (
                "seg 0 0 0 0 0 0",
                "line 1: the line segment has zero length (start == end); give two distinct points",
            ),
            (
                "seg 1e400 0 0 0 0 0",
                "line 1: the segment start point is NaN or infinite; queries need finite numbers",
            ),
            (
                "sphere 0 0 0 -1",
                "line 1: the sphere radius -1 is negative",
            ),
            (
                "sphere 0 nan 0 1",
                "line 1: the sphere centre is NaN or infinite; queries need finite numbers",
            ),
        ] {
            assert_eq!(error_of(text), message, "{text}");
        }
        // The line number is the file's, comments and blank lines counted.
        let lines = parse_query_file("# header\n\nseg 0 0 0 1 1 1\nsphere 0 0 0\n");
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[1].query.as_ref().unwrap_err().to_string(),
            "line 4: `sphere` takes 4 numbers, found 3"
        );
    }

    #[test]
    fn sixty_five_planes_are_refused_with_the_limit() {
        let planes = " 0 1 0 0".repeat(65);
        assert_eq!(
            error_of(&format!("poly 65{planes}")),
            "line 1: the polytope has 65 planes; at most 64 are supported"
        );
        assert!(
            parse_query_file(&format!("poly 64{}", " 0 1 0 0".repeat(64)))[0]
                .query
                .is_ok()
        );
    }

    #[test]
    fn segment_hits_are_sorted_by_ratio_then_name_and_triangle() {
        let row = |ratio, node, triangle| SegmentRow {
            ratio,
            drawable: Some((node, 0)),
            triangle,
            point: DVec3::new(ratio, 0.0, -0.0),
        };
        let hits = vec![
            row(0.5, 2, 1),
            row(0.5, 10, 0),
            row(0.125, 7, 3),
            row(0.5, 2, 0),
        ];
        assert_eq!(
            result_line(4, &Ok(BatchAnswer::Segment(hits))),
            concat!(
                r#"{"q":4,"kind":"seg","hits":["#,
                r#"{"d":"n7/p0","tri":3,"ratio":0.125,"point":[0.125,0,-0]},"#,
                r#"{"d":"n10/p0","tri":0,"ratio":0.5,"point":[0.5,0,-0]},"#,
                r#"{"d":"n2/p0","tri":0,"ratio":0.5,"point":[0.5,0,-0]},"#,
                r#"{"d":"n2/p0","tri":1,"ratio":0.5,"point":[0.5,0,-0]}]}"#
            )
        );
    }

    #[test]
    fn an_error_line_is_json_with_its_message_escaped() {
        let error = QueryLineError::NotANumber {
            line: 3,
            word: "\"a\\b\"\u{1}".into(),
        };
        assert_eq!(
            result_line(2, &Err(error)),
            r#"{"q":2,"error":"line 3: `\"a\\b\"\u0001` is not a number"}"#
        );
        assert_eq!(
            result_line(0, &Ok(BatchAnswer::Polytope(vec![]))),
            r#"{"q":0,"kind":"poly","hits":[]}"#
        );
    }
}
