// The C++ peers of benches/intersect/: OpenSceneGraph 3.6 (osgUtil with its KdTree)
// and Embree 3, answering the bench's own workloads on the same world triangles.
//
// Not part of the Rust build. The bench writes a workload file and runs this program
// on it when BENCH_PEERS names the built binary (see benches/README.md, "Against
// OpenSceneGraph and Embree"):
//
//   sh benches/peers/build.sh            # needs libopenscenegraph-dev, libembree-dev
//   BENCH_PEERS=target/peers/peers cargo bench --bench intersect -- no_criterion_match
//
// Workload file (little endian), as `write_peer_workload` in benches/intersect/peers.rs
// writes it:
//   "SIPEERS2"
//   u32 vertex count, then that many f32 x, y, z (world space)
//   u32 mesh count, then per mesh u32 first triangle, u32 triangle count, u32 path
//     length, then that many u32 node numbers (the node path it was reached by, root first)
//   u32 triangle count, then that many u32 a, b, c
//   u32 segment count, then per segment f64 start x, y, z, end x, y, z
//   u32 box count, then per box 6 planes of f64 a, b, c, d (inside: a x + b y + c z + d >= 0)
//
// Output, one line per workload: "peer <engine>_<workload> <median ms> <hits>", the
// median time of one run of the whole batch (builds: of one build), measured as
// `median_ms` below says.

#include <embree3/rtcore.h>
#include <osg/Geode>
#include <osg/Geometry>
#include <osg/Group>
#include <osg/KdTree>
#include <osg/Polytope>
#include <osgUtil/IntersectionVisitor>
#include <osgUtil/LineSegmentIntersector>
#include <osgUtil/PolytopeIntersector>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

struct Mesh {
    uint32_t first, count;       // the run of triangles
    std::vector<uint32_t> path;  // node numbers, root first
};

struct Workload {
    std::vector<float> vertices;                        // x, y, z per vertex
    std::vector<Mesh> meshes;
    std::vector<uint32_t> triangles;                    // a, b, c per triangle
    std::vector<double> segments;                       // 6 per segment
    std::vector<double> boxes;                          // 24 per box
};

class Reader {
public:
    explicit Reader(const char* path) : in_(path, std::ios::binary) {
        if (!in_) throw std::runtime_error(std::string("cannot open ") + path);
    }
    template <typename T> T read() {
        T value;
        if (!in_.read(reinterpret_cast<char*>(&value), sizeof value))
            throw std::runtime_error("workload file ends early");
        return value;
    }
    template <typename T> std::vector<T> read_many(size_t count) {
        std::vector<T> values(count);
        if (count && !in_.read(reinterpret_cast<char*>(values.data()), count * sizeof(T)))
            throw std::runtime_error("workload file ends early");
        return values;
    }

private:
    std::ifstream in_;
};

Workload load(const char* path) {
    Reader r(path);
    char magic[8];
    for (char& c : magic) c = r.read<char>();
    if (std::string(magic, 8) != "SIPEERS2") throw std::runtime_error("not a peers workload file");
    Workload w;
    w.vertices = r.read_many<float>(3 * size_t(r.read<uint32_t>()));
    uint32_t meshes = r.read<uint32_t>();
    for (uint32_t k = 0; k < meshes; ++k) {
        Mesh mesh;
        mesh.first = r.read<uint32_t>();
        mesh.count = r.read<uint32_t>();
        mesh.path = r.read_many<uint32_t>(r.read<uint32_t>());
        w.meshes.push_back(std::move(mesh));
    }
    w.triangles = r.read_many<uint32_t>(3 * size_t(r.read<uint32_t>()));
    w.segments = r.read_many<double>(6 * size_t(r.read<uint32_t>()));
    w.boxes = r.read_many<double>(24 * size_t(r.read<uint32_t>()));
    for (uint32_t v : w.triangles)
        if (size_t(v) * 3 >= w.vertices.size()) throw std::runtime_error("vertex index out of range");
    for (const Mesh& mesh : w.meshes)
        if ((size_t(mesh.first) + mesh.count) * 3 > w.triangles.size())
            throw std::runtime_error("mesh out of range");
    return w;
}

// Median time of one run of `run` in milliseconds, and its last answer, as the bench's
// own `median_ms` measures: `run` first runs untimed for one sample's time (20 ms),
// then 5 samples each repeat it for at least that long (a slow run, once).
std::pair<double, size_t> median_ms(const std::function<size_t()>& run) {
    using clock = std::chrono::steady_clock;
    const auto sample = std::chrono::milliseconds(20);
    size_t answer = 0;
    const auto warm = clock::now();
    while (clock::now() - warm < sample) answer = run();
    std::vector<double> times;
    for (int k = 0; k < 5; ++k) {
        const auto start = clock::now();
        int runs = 0;
        do {
            answer = run();
            ++runs;
        } while (clock::now() - start < sample);
        times.push_back(std::chrono::duration<double, std::milli>(clock::now() - start).count() / runs);
    }
    std::sort(times.begin(), times.end());
    return {times[2], answer};
}

void report(const char* name, std::pair<double, size_t> result) {
    std::printf("peer %s %.6f %zu\n", name, result.first, result.second);
    std::fflush(stdout);
}

// ----- OpenSceneGraph: the scene's node paths as nested groups, as a loader would make
// ----- them, with one geode per mesh and the vertices already in world space (no
// ----- transforms to cross), and a KdTree per geometry. A node shared by several paths
// ----- becomes one group per path (its meshes differ in world space).

osg::ref_ptr<osg::Group> osg_scene(const Workload& w, bool kd_trees) {
    osg::ref_ptr<osg::Group> root = new osg::Group;
    std::map<std::pair<osg::Group*, uint32_t>, osg::Group*> groups;
    for (const Mesh& mesh : w.meshes) {
        osg::Group* parent = root.get();
        for (uint32_t node : mesh.path) {
            osg::Group*& child = groups[{parent, node}];
            if (!child) {
                child = new osg::Group;
                parent->addChild(child);
            }
            parent = child;
        }
        osg::ref_ptr<osg::Vec3Array> vertices = new osg::Vec3Array;
        vertices->reserve(size_t(mesh.count) * 3);
        for (size_t t = mesh.first; t < size_t(mesh.first) + mesh.count; ++t)
            for (int corner = 0; corner < 3; ++corner) {
                const float* v = &w.vertices[size_t(w.triangles[3 * t + corner]) * 3];
                vertices->push_back(osg::Vec3(v[0], v[1], v[2]));
            }
        osg::ref_ptr<osg::Geometry> geometry = new osg::Geometry;
        geometry->setVertexArray(vertices.get());
        geometry->addPrimitiveSet(new osg::DrawArrays(GL_TRIANGLES, 0, GLsizei(vertices->size())));
        osg::ref_ptr<osg::Geode> geode = new osg::Geode;
        geode->addDrawable(geometry.get());
        parent->addChild(geode.get());
    }
    if (kd_trees) {
        osg::ref_ptr<osg::KdTreeBuilder> builder = new osg::KdTreeBuilder;
        root->accept(*builder);
    }
    return root;
}

size_t osg_segments(osg::Group* root, const Workload& w, bool nearest) {
    size_t hits = 0;
    for (size_t k = 0; k + 6 <= w.segments.size(); k += 6) {
        const double* s = &w.segments[k];
        osg::ref_ptr<osgUtil::LineSegmentIntersector> intersector =
            new osgUtil::LineSegmentIntersector(osg::Vec3d(s[0], s[1], s[2]), osg::Vec3d(s[3], s[4], s[5]));
        intersector->setIntersectionLimit(nearest ? osgUtil::Intersector::LIMIT_NEAREST
                                                  : osgUtil::Intersector::NO_LIMIT);
        osgUtil::IntersectionVisitor visitor(intersector.get());
        root->accept(visitor);
        // Under LIMIT_NEAREST OSG may keep more than one (each nearer than the last).
        size_t found = intersector->getIntersections().size();
        hits += nearest ? (found > 0 ? 1 : 0) : found;
    }
    return hits;
}

size_t osg_boxes(osg::Group* root, const Workload& w) {
    size_t hits = 0;
    for (size_t k = 0; k + 24 <= w.boxes.size(); k += 24) {
        osg::Polytope polytope;
        for (int p = 0; p < 6; ++p) {
            const double* q = &w.boxes[k + 4 * p];
            polytope.add(osg::Plane(q[0], q[1], q[2], q[3]));
        }
        osg::ref_ptr<osgUtil::PolytopeIntersector> intersector = new osgUtil::PolytopeIntersector(polytope);
        intersector->setPrimitiveMask(osgUtil::PolytopeIntersector::TRIANGLE_PRIMITIVES);
        osgUtil::IntersectionVisitor visitor(intersector.get());
        root->accept(visitor);
        hits += intersector->getIntersections().size();
    }
    return hits;
}

// ----- Embree: every triangle in one scene of one triangle geometry (its best case);
// ----- all hits through an intersection filter that records each hit and rejects it,
// ----- so the traversal goes on.

struct AllHitsContext {
    RTCIntersectContext context;  // first member: Embree hands back a pointer to it
    std::vector<std::pair<unsigned, unsigned>>* hits;
};

void record_and_reject(const RTCFilterFunctionNArguments* args) {
    auto* all = reinterpret_cast<AllHitsContext*>(args->context);
    for (unsigned i = 0; i < args->N; ++i) {
        if (args->valid[i] == 0) continue;
        all->hits->emplace_back(RTCHitN_geomID(args->hit, args->N, i), RTCHitN_primID(args->hit, args->N, i));
        args->valid[i] = 0;
    }
}

RTCScene embree_scene(RTCDevice device, const Workload& w, bool all_hits) {
    RTCScene scene = rtcNewScene(device);
    RTCGeometry geometry = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    size_t vertex_count = w.vertices.size() / 3, triangle_count = w.triangles.size() / 3;
    auto* vertices = static_cast<float*>(rtcSetNewGeometryBuffer(
        geometry, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, 3 * sizeof(float), vertex_count));
    std::copy(w.vertices.begin(), w.vertices.end(), vertices);
    auto* indices = static_cast<unsigned*>(rtcSetNewGeometryBuffer(
        geometry, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(unsigned), triangle_count));
    std::copy(w.triangles.begin(), w.triangles.end(), indices);
    if (all_hits) rtcSetGeometryIntersectFilterFunction(geometry, record_and_reject);
    rtcCommitGeometry(geometry);
    rtcAttachGeometry(scene, geometry);
    rtcReleaseGeometry(geometry);
    rtcCommitScene(scene);
    return scene;
}

RTCRayHit embree_ray(const double* s) {
    RTCRayHit ray{};
    ray.ray.org_x = float(s[0]);
    ray.ray.org_y = float(s[1]);
    ray.ray.org_z = float(s[2]);
    ray.ray.dir_x = float(s[3] - s[0]);
    ray.ray.dir_y = float(s[4] - s[1]);
    ray.ray.dir_z = float(s[5] - s[2]);
    ray.ray.tnear = 0.0f;
    ray.ray.tfar = 1.0f;  // the segment: t in [0, 1] along end - start
    ray.ray.mask = ~0u;
    ray.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    return ray;
}

size_t embree_nearest(RTCScene scene, const Workload& w) {
    size_t hits = 0;
    RTCIntersectContext context;
    for (size_t k = 0; k + 6 <= w.segments.size(); k += 6) {
        rtcInitIntersectContext(&context);
        RTCRayHit ray = embree_ray(&w.segments[k]);
        rtcIntersect1(scene, &context, &ray);
        hits += ray.hit.geomID != RTC_INVALID_GEOMETRY_ID;
    }
    return hits;
}

size_t embree_all(RTCScene scene, const Workload& w) {
    size_t hits = 0;
    std::vector<std::pair<unsigned, unsigned>> found;
    for (size_t k = 0; k + 6 <= w.segments.size(); k += 6) {
        found.clear();
        AllHitsContext all;
        rtcInitIntersectContext(&all.context);
        all.hits = &found;
        RTCRayHit ray = embree_ray(&w.segments[k]);
        rtcIntersect1(scene, &all.context, &ray);
        // A triangle the filter saw twice counts once.
        std::sort(found.begin(), found.end());
        hits += size_t(std::unique(found.begin(), found.end()) - found.begin());
    }
    return hits;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: peers WORKLOAD_FILE\n");
        return 2;
    }
    try {
        Workload w = load(argv[1]);

        report("osg_build", median_ms([&] {
                   osg_scene(w, true);
                   return w.meshes.size();
               }));
        osg::ref_ptr<osg::Group> osg_root = osg_scene(w, true);
        report("osg_segments_all", median_ms([&] { return osg_segments(osg_root.get(), w, false); }));
        report("osg_segments_nearest", median_ms([&] { return osg_segments(osg_root.get(), w, true); }));
        report("osg_boxes", median_ms([&] { return osg_boxes(osg_root.get(), w); }));

        RTCDevice device = rtcNewDevice("threads=1");
        if (!device) throw std::runtime_error("Embree: no device");
        report("embree_build", median_ms([&] {
                   RTCScene scene = embree_scene(device, w, false);
                   rtcReleaseScene(scene);
                   return w.triangles.size() / 3;
               }));
        RTCScene nearest_scene = embree_scene(device, w, false);
        report("embree_segments_nearest", median_ms([&] { return embree_nearest(nearest_scene, w); }));
        RTCScene all_scene = embree_scene(device, w, true);
        report("embree_segments_all", median_ms([&] { return embree_all(all_scene, w); }));
        rtcReleaseScene(nearest_scene);
        rtcReleaseScene(all_scene);
        rtcReleaseDevice(device);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "peers: %s\n", e.what());
        return 1;
    }
    return 0;
}
