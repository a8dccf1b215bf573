// Validates Gateway API documents against the schemas of the npm package
// @kubernetes-models/gateway-api (pinned in package.json; `npm ci` installs it), for
// tests/deploy/test_manifests.py. The package compiles the Gateway API's own API types (the Go
// types its CRDs are generated from) into one validate function per kind and version.
//
// Reads a JSON list of documents on stdin and writes a JSON list with, for each document:
//   errors   what the package's validate function refused (path, keyword, its parameters)
//   unknown  the paths of fields the schema does not have. The compiled functions ignore fields
//            they do not know, where the API server refuses them (kubectl's strict field
//            validation), so each object is watched while the function runs: a field it never
//            read is one its schema does not name. An object whose keys it enumerates is a map
//            (labels, annotations), whose keys are all known.
import { readFileSync } from "node:fs";

const GROUP = "gateway.networking.k8s.io";

function watch(value, path, objects) {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item, i) => watch(item, `${path}/${i}`, objects));
  const seen = { path, keys: Object.keys(value), read: new Set(), map: false };
  objects.push(seen);
  const target = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, watch(v, `${path}/${k}`, objects)]));
  return new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key === "string") seen.read.add(key);
      return Reflect.get(t, key, receiver);
    },
    has(t, key) {
      if (typeof key === "string") seen.read.add(key);
      return Reflect.has(t, key);
    },
    ownKeys(t) {
      seen.map = true;
      return Reflect.ownKeys(t);
    },
  });
}

async function validatorFor(doc) {
  const [group, version] = String(doc.apiVersion).split("/");
  if (group !== GROUP || !version) return null;
  const name = `IoK8sSigsGatewayApiApis${version[0].toUpperCase()}${version.slice(1)}${doc.kind}`;
  try {
    return (await import(`@kubernetes-models/gateway-api/_schemas/${name}`)).validate;
  } catch (error) {
    if (error.code === "ERR_PACKAGE_PATH_NOT_EXPORTED" || error.code === "ERR_MODULE_NOT_FOUND") {
      // The package itself missing is an error of the test's setup, not of the document.
      await import("@kubernetes-models/gateway-api");
      return null;
    }
    throw error;
  }
}

const documents = JSON.parse(readFileSync(0, "utf8"));
const results = [];
for (const doc of documents) {
  const validate = await validatorFor(doc);
  if (validate === null) {
    results.push({ errors: [`no Gateway API schema for ${doc.apiVersion} ${doc.kind}`], unknown: [] });
    continue;
  }
  const objects = [];
  const valid = validate(watch(doc, "", objects));
  const errors = valid ? [] : validate.errors.map((e) => `${e.instancePath || "/"}: ${e.keyword} ${JSON.stringify(e.params)}`);
  const unread = objects.filter((o) => !o.map).flatMap((o) => o.keys.filter((k) => !o.read.has(k)).map((k) => `${o.path}/${k}`));
  // Only the outermost: what lies inside an unknown field was never read either.
  const unknown = unread.filter((path) => !unread.some((outer) => path.startsWith(`${outer}/`)));
  results.push({ errors, unknown });
}
process.stdout.write(JSON.stringify(results));
