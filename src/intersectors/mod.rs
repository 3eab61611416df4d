//! The intersectors: line segment, polytope and sphere queries, their hits, and
//! [`IntersectorGroup`] to answer several in one traversal.
//!
//! All three treat primitives and solids as closed sets and report world-space
//! distances in world units, even under scaled transforms. Queries are checked when they
//! are built: NaN or infinite numbers, a zero-length segment, a negative radius, a
//! polytope without planes or with a zero normal are [`QueryError`]s.

mod box_planes;
mod clipping;
mod error;
mod group;
mod hit_order;
mod hit_records;
mod line_segment;
mod local_reach;
mod node_path_pool;
mod polytope;
mod polytope_intersector;
mod polytope_world_walk;
mod primitive_mask;
mod segment_hit_store;
mod segment_hit_summary;
mod segment_triangle;
mod segment_world_walk;
mod slot_runs;
mod sorted_positions;
mod sphere;
mod sphere_world_walk;
mod volume_hit_store;
mod volume_hit_summary;
mod world_candidate;

pub use clipping::{clip_polygon, clip_segment, ClipPolygon};
pub use error::QueryError;
pub use group::{AnyIntersector, AnyLocal, IntersectorGroup};
pub use hit_records::HitRecords;
pub use line_segment::{LineSegmentHit, LineSegmentIntersector, LocalSegment};
pub use polytope::{Polytope, MAX_PLANES};
pub use polytope_intersector::{LocalPolytope, PolytopeHit, PolytopeIntersector};
pub use primitive_mask::{PrimitiveKind, PrimitiveMask};
pub use segment_hit_summary::{SegmentHitSummaries, SegmentHitSummary};
pub use segment_triangle::{
    intersect_segment_triangle, intersect_segment_triangle_up_to, SegmentTriangleHit,
};
pub use sphere::{LocalSphere, SphereHit, SphereIntersector};
pub use volume_hit_summary::{VolumeHitSummaries, VolumeHitSummary};
