// Command mkimage builds a single-layer linux/amd64 container image from local
// files, without a registry or a container engine, and writes it as an OCI
// image-layout tarball (oci-layout, index.json, blobs/) that also carries a
// Docker-compatible manifest.json, so both `ctr images import` and
// `docker load` accept it. The output is reproducible: fixed timestamps and
// owners, files in sorted order.
//
//	mkimage -tag local.test/deploystep:dev -o dist/deploystep.tar \
//	  -file bin/deploystep=/usr/local/bin/deploystep -entrypoint /usr/local/bin/deploystep \
//	  -user 65532:65532 -ca-certs /etc/ssl/certs/ca-certificates.crt
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

var epoch = time.Unix(0, 0).UTC()

func main() {
	var files, envs multi
	tag := flag.String("tag", "", "image reference, e.g. local.test/deploystep:dev (required)")
	out := flag.String("o", "", "output tarball (required)")
	flag.Var(&files, "file", "SRC=DST: copy local file SRC to DST in the image (repeatable); mode is kept")
	flag.Var(&envs, "env", "K=V added to the image environment (repeatable)")
	entrypoint := flag.String("entrypoint", "", "comma-separated entrypoint")
	user := flag.String("user", "65532:65532", "uid:gid the image runs as (numeric); empty means root")
	caCerts := flag.String("ca-certs", "", "CA bundle copied to /etc/ssl/certs/ca-certificates.crt")
	workdir := flag.String("workdir", "/", "working directory")
	flag.Parse()
	if *tag == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	ref, err := name.NewTag(*tag, name.WeakValidation)
	if err != nil {
		log.Fatalf("tag: %v", err)
	}

	entries := map[string]entry{}
	addDir := func(p string, mode int64) { entries[p] = entry{dir: true, mode: mode} }
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/local", "usr/local/bin", "bin", "home", "home/nonroot"} {
		addDir(d, 0o755)
	}
	addDir("tmp", 0o1777)
	uid, gid := 0, 0
	if *user != "" {
		if _, err := fmt.Sscanf(*user, "%d:%d", &uid, &gid); err != nil {
			log.Fatalf("-user must be uid:gid: %v", err)
		}
	}
	entries["etc/passwd"] = entry{data: []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nz(uid, 65532), nz(gid, 65532))), mode: 0o644}
	entries["etc/group"] = entry{data: []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nz(gid, 65532))), mode: 0o644}
	entries["etc/nsswitch.conf"] = entry{data: []byte("hosts: files dns\n"), mode: 0o644}
	if uid != 0 {
		e := entries["home/nonroot"]
		e.uid, e.gid = uid, gid
		entries["home/nonroot"] = e
	}
	if *caCerts != "" {
		b, err := os.ReadFile(*caCerts)
		if err != nil {
			log.Fatalf("ca-certs: %v", err)
		}
		entries["etc/ssl/certs/ca-certificates.crt"] = entry{data: b, mode: 0o644}
	}
	for _, f := range files {
		src, dst, ok := strings.Cut(f, "=")
		if !ok {
			log.Fatalf("-file %q: want SRC=DST", f)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			log.Fatalf("-file: %v", err)
		}
		st, _ := os.Stat(src)
		dst = strings.TrimPrefix(path.Clean("/"+dst), "/")
		for d := path.Dir(dst); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				addDir(d, 0o755)
			}
		}
		entries[dst] = entry{data: b, mode: int64(st.Mode().Perm())}
	}

	layerTar, err := buildTar(entries)
	if err != nil {
		log.Fatal(err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		log.Fatal(err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "mkimage"}})
	if err != nil {
		log.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		log.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}, envs...)
	if *entrypoint != "" {
		cf.Config.Entrypoint = strings.Split(*entrypoint, ",")
	}
	cf.Config.User = *user
	cf.Config.WorkingDir = *workdir
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		log.Fatal(err)
	}
	if err := writeLayout(*out, ref, img); err != nil {
		log.Fatal(err)
	}
	d, _ := img.Digest()
	fmt.Printf("%s %s %s\n", *out, ref.Name(), d)
}

type entry struct {
	dir      bool
	data     []byte
	mode     int64
	uid, gid int
}

func nz(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func buildTar(entries map[string]entry) ([]byte, error) {
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := entries[n]
		h := &tar.Header{Name: n, Mode: e.mode, ModTime: epoch, Uid: e.uid, Gid: e.gid, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, n+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if !e.dir {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeLayout writes an OCI image layout as a tarball, plus manifest.json.
func writeLayout(out string, ref name.Tag, img v1.Image) error {
	type blob struct {
		digest v1.Hash
		data   []byte
	}
	var blobs []blob
	cfgName, err := img.ConfigName()
	if err != nil {
		return err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	blobs = append(blobs, blob{cfgName, cfg})
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	var layerPaths []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		blobs = append(blobs, blob{d, b})
		layerPaths = append(layerPaths, "blobs/sha256/"+d.Hex)
	}
	man, err := img.RawManifest()
	if err != nil {
		return err
	}
	manDigest, err := img.Digest()
	if err != nil {
		return err
	}
	blobs = append(blobs, blob{manDigest, man})

	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     types.OCIImageIndex,
		"manifests": []map[string]any{{
			"mediaType": types.OCIManifestSchema1,
			"digest":    manDigest.String(),
			"size":      len(man),
			"annotations": map[string]string{
				"io.containerd.image.name":          ref.Name(),
				"org.opencontainers.image.ref.name": ref.TagStr(),
			},
		}},
	})
	if err != nil {
		return err
	}
	dockerManifest, err := json.Marshal([]map[string]any{{
		"Config":   "blobs/sha256/" + cfgName.Hex,
		"RepoTags": []string{ref.Name()},
		"Layers":   layerPaths,
	}})
	if err != nil {
		return err
	}

	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	add := func(n string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
	}
	seen := map[v1.Hash]bool{}
	for _, b := range blobs {
		if seen[b.digest] {
			continue
		}
		seen[b.digest] = true
		if err := add("blobs/sha256/"+b.digest.Hex, b.data); err != nil {
			return err
		}
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := add("index.json", index); err != nil {
		return err
	}
	if err := add("manifest.json", dockerManifest); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}
