//! Random small scenes and random queries: nothing may panic, invalid input must be an
//! `Err` at construction, the accelerated visitor must answer exactly as the plain one
//! on any input, and on "tame" input (grid vertices, simple transforms, grid queries)
//! the visitor must agree with the brute-force reference of `tests/support/reference.rs`
//! and keep its ordering and limit invariants.
#![no_main]

use arbitrary::Arbitrary;
use glam::DVec3;
use libfuzzer_sys::fuzz_target;
use scene_intersect::graph::{NodeId, SceneGraph};
use scene_intersect::intersectors::{
    HitRecords, LineSegmentIntersector, Polytope, PolytopeIntersector, PrimitiveMask,
    SphereIntersector,
};
use scene_intersect::visitor::{IntersectionLimit, IntersectionVisitor, Intersector};

#[path = "../../tests/support/reference.rs"]
mod reference;
mod scene_spec;

use reference::Query;
use scene_spec::{build_query, build_scene, BuiltScene, GeometrySpec, NodeSpec, QuerySpec};

#[derive(Arbitrary, Debug)]
struct Input {
    nodes: Vec<NodeSpec>,
    geometries: Vec<GeometrySpec>,
    queries: Vec<QuerySpec>,
}

/// The accelerated visitor (scene index, world tree, primitive BVHs) must answer exactly
/// as the plain traversal did (`plain`, under `limit`; `all`, every hit), on any scene
/// and query, tame or not: compared through their `Debug` text, so that a NaN the plain
/// traversal reports must be a NaN there too, and a −0 a −0. Under `One` (any hit: the
/// first one found, which depends on the traversal) it must find a hit exactly when the
/// plain traversal does, and one of the plain traversal's hits.
fn same_accelerated(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    plain: &[reference::Hit],
    all: &[reference::Hit],
) {
    let accelerated = reference::run_query_accelerated(scene, root, query, limit)
        .expect("a valid query on a valid root");
    if limit == IntersectionLimit::One {
        assert_eq!(
            accelerated.len(),
            plain.len(),
            "accelerated One: a hit or none"
        );
        let every: Vec<String> = all.iter().map(|h| format!("{h:?}")).collect();
        for hit in &accelerated {
            assert!(
                every.contains(&format!("{hit:?}")),
                "accelerated One found a hit the plain traversal does not: {hit:?}"
            );
        }
        return;
    }
    assert_eq!(
        format!("{accelerated:?}"),
        format!("{plain:?}"),
        "accelerated and plain answers differ ({limit:?})"
    );
}

/// What the reference does not model, compared between the accelerated and plain
/// traversals only (through their hits' `Debug` text): a segment with a picking
/// tolerance (points and lines are hit too), polytopes and balls that hit triangles
/// only, or points and lines only; and the full records read as summaries against
/// summaries alone. Every limit but `One` (whose hit depends on the
/// traversal's order).
fn same_accelerated_variants(scene: &SceneGraph, root: NodeId, query: &Query) {
    fn answer<I: Intersector>(
        scene: &SceneGraph,
        root: NodeId,
        accelerated: bool,
        mut intersector: I,
        hits: impl Fn(&I) -> String,
    ) -> String {
        let mut visitor = IntersectionVisitor::new();
        visitor.set_use_acceleration(accelerated);
        visitor
            .apply(scene, root, &mut intersector)
            .expect("a valid query on a valid root");
        hits(&intersector)
    }
    let masks = [
        PrimitiveMask::TRIANGLES,
        PrimitiveMask::POINTS | PrimitiveMask::LINES,
    ];
    // For a polytope or a ball, per mask: the full records accelerated and plain, the
    // full records read as summaries against summaries alone, and the accelerated
    // summaries against the plain traversal's unsorted ones, as sets.
    fn per_mask<I: Intersector>(
        (scene, root): (&SceneGraph, NodeId),
        masks: &[PrimitiveMask],
        query: impl Fn(PrimitiveMask, HitRecords) -> I,
        records: impl Fn(&I) -> String,
        summaries: impl Fn(&I) -> String,
        summary_set: impl Fn(&I) -> String,
    ) -> Vec<[String; 2]> {
        (masks.iter())
            .flat_map(|&mask| {
                [
                    [true, false].map(|accelerated| {
                        let i = query(mask, HitRecords::Full);
                        answer(scene, root, accelerated, i, &records)
                    }),
                    [HitRecords::Full, HitRecords::Summaries]
                        .map(|r| answer(scene, root, true, query(mask, r), &summaries)),
                    [
                        (true, HitRecords::Summaries),
                        (false, HitRecords::UnsortedSummaries),
                    ]
                    .map(|(accelerated, r)| {
                        answer(scene, root, accelerated, query(mask, r), &summary_set)
                    }),
                ]
            })
            .collect()
    }
    for limit in [
        IntersectionLimit::None,
        IntersectionLimit::Nearest,
        IntersectionLimit::OnePerDrawable,
    ] {
        for accelerated_and_plain in match query {
            Query::Segment(a, b) => {
                let picker = |records| {
                    LineSegmentIntersector::new(*a, *b)
                        .and_then(|i| i.with_limit(limit).with_picking_tolerance(0.25))
                        .expect("a valid segment and tolerance")
                        .with_records(records)
                };
                let summaries =
                    |i: &LineSegmentIntersector| format!("{:?}", i.summaries().collect::<Vec<_>>());
                vec![
                    [true, false].map(|accelerated| {
                        answer(scene, root, accelerated, picker(HitRecords::Full), |i| {
                            format!("{:?}", i.intersections())
                        })
                    }),
                    // The full records read as summaries, and summaries alone.
                    [HitRecords::Full, HitRecords::Summaries]
                        .map(|records| answer(scene, root, true, picker(records), summaries)),
                    // Accelerated summaries and the plain traversal's unsorted ones, as
                    // sets.
                    [
                        (true, HitRecords::Summaries),
                        (false, HitRecords::UnsortedSummaries),
                    ]
                    .map(|(accelerated, records)| {
                        answer(scene, root, accelerated, picker(records), |i| {
                            as_set(i.summaries())
                        })
                    }),
                ]
            }
            Query::Polytope(planes) => per_mask(
                (scene, root),
                &masks,
                |mask, records| {
                    // The summaries' polytope written in place over a box (`set_planes`),
                    // the others' made by `new`: the two must agree.
                    let polytope = match records {
                        HitRecords::Full => {
                            Polytope::new(planes.iter().copied()).expect("a valid polytope")
                        }
                        HitRecords::Summaries | HitRecords::UnsortedSummaries => {
                            let mut reused =
                                Polytope::from_box(DVec3::ZERO, DVec3::ONE).expect("the unit box");
                            reused.set_planes(planes).expect("a valid polytope");
                            reused
                        }
                    };
                    PolytopeIntersector::new(polytope)
                        .with_limit(limit)
                        .with_primitive_mask(mask)
                        .with_records(records)
                },
                |i| format!("{:?}", i.intersections()),
                |i| format!("{:?}", i.summaries().collect::<Vec<_>>()),
                |i| as_set(i.summaries()),
            ),
            Query::Sphere(c, r) => per_mask(
                (scene, root),
                &masks,
                |mask, records| {
                    SphereIntersector::new(*c, *r)
                        .expect("a valid sphere")
                        .with_limit(limit)
                        .with_primitive_mask(mask)
                        .with_records(records)
                },
                |i| format!("{:?}", i.intersections()),
                |i| format!("{:?}", i.summaries().collect::<Vec<_>>()),
                |i| as_set(i.summaries()),
            ),
        } {
            let [accelerated, plain] = accelerated_and_plain;
            assert_eq!(
                accelerated, plain,
                "answers differ ({limit:?}, a variant: accelerated and plain, or full records and summaries)"
            );
        }
    }
}

/// The items' `Debug` texts, sorted: the same text for the same items in any order.
fn as_set<T: std::fmt::Debug>(items: impl Iterator<Item = T>) -> String {
    let mut texts: Vec<String> = items.map(|item| format!("{item:?}")).collect();
    texts.sort();
    texts.join("\n")
}

fuzz_target!(|input: Input| {
    let BuiltScene {
        scene,
        root,
        tame: tame_scene,
        ..
    } = build_scene(&input.nodes, &input.geometries);
    for spec in input.queries.iter().take(4) {
        let (Some(query), tame_query) = build_query(spec) else {
            continue;
        };
        let all = reference::run_query(&scene, root, &query, IntersectionLimit::None)
            .expect("a valid query on a valid root");
        same_accelerated(&scene, root, &query, IntersectionLimit::None, &all, &all);
        same_accelerated_variants(&scene, root, &query);
        for limit in [
            IntersectionLimit::One,
            IntersectionLimit::Nearest,
            IntersectionLimit::OnePerDrawable,
        ] {
            let limited = reference::run_query(&scene, root, &query, limit).expect("valid");
            same_accelerated(&scene, root, &query, limit, &limited, &all);
            if !(tame_scene && tame_query) {
                continue;
            }
            match limit {
                IntersectionLimit::One => assert_eq!(limited.len(), usize::from(!all.is_empty())),
                IntersectionLimit::Nearest => assert_eq!(limited.first(), all.first()),
                _ => assert_eq!(limited.len(), reference::by_visit(&all).len()),
            }
        }
        if !(tame_scene && tame_query) {
            continue;
        }
        assert!(
            all.windows(2).all(|w| w[0].order <= w[1].order),
            "hits are not sorted"
        );
        let margin = match query {
            Query::Segment(..) => 1e-7,
            _ => 1e-6,
        };
        if let Err(e) = reference::check(&scene, root, &query, &all, margin, f64::INFINITY) {
            panic!("disagreement with the reference: {e}");
        }
    }
});
