package http

import (
	"embed"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// The API reference page (GET /docs): Swagger UI over the document served at
// /v1/openapi.json, with every asset embedded in the binary (no CDN). The
// third-party files in docsassets/ are the npm package swagger-ui-dist,
// unmodified, at the version recorded in docsassets/VERSION; the script
// tools/docs-assets.sh refreshes them. The page, its start script and the
// routes are ours.
//
// The page is switched by gateway.rest.docs.enabled (Options.Docs). Like the
// OpenAPI document it needs no credentials: it only describes the API, and
// the requests its "Try it out" buttons send are authenticated as any other.

//go:embed docsassets/swagger-ui-bundle.js docsassets/swagger-ui.css docsassets/LICENSE docsassets/NOTICE docsassets/swagger-ui-bundle.js.LICENSE.txt docsassets/VERSION
var docsAssets embed.FS

// Paths of the reference page and its assets. The page refers to them
// relatively ("docs/…", "v1/openapi.json"), so it also works behind a proxy
// that mounts the gateway under a path prefix.
const (
	pathDocs       = "/docs"
	pathDocsPrefix = "/docs/"
)

// docsCSP is the Content-Security-Policy of the page and its assets: only
// same-origin scripts, styles and fetches (the document and "Try it out"
// requests), images from the origin or data: URIs (Swagger UI's inline SVG
// icons), no plugins, frames, forms to elsewhere or base-URI changes. No
// inline script is needed: the start script is a file of its own.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fluss-gateway API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/start.js"></script>
</body>
</html>
`

// docsStart mounts Swagger UI on the served document. BaseLayout has no
// URL bar, so the page shows this gateway's API only.
const docsStart = `"use strict";
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "v1/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    displayOperationId: true,
    layout: "BaseLayout",
    presets: [SwaggerUIBundle.presets.apis],
    validatorUrl: null
  });
});
`

// docsFile is one asset: its content type and where its bytes come from.
type docsFile struct {
	contentType string
	body        []byte
	// encoded holds the body encoded once per content coding at start
	// (registerDocs): the page is public, so encoding it per request would
	// let anyone spend the gateway's CPU (issue 27: 8 ms per request).
	encoded map[string][]byte
}

// docsFiles maps the request path to the served file; it panics at start if
// an embedded file is missing, which the build would have caught.
func docsFiles() map[string]docsFile {
	read := func(name string) []byte {
		b, err := docsAssets.ReadFile("docsassets/" + name)
		if err != nil {
			panic("http: embedded docs asset: " + err.Error())
		}
		return b
	}
	text := "text/plain; charset=utf-8"
	return map[string]docsFile{
		pathDocs:                                    {"text/html; charset=utf-8", []byte(docsPage), nil},
		pathDocsPrefix + "start.js":                 {"text/javascript; charset=utf-8", []byte(docsStart), nil},
		pathDocsPrefix + "swagger-ui-bundle.js":     {"text/javascript; charset=utf-8", read("swagger-ui-bundle.js"), nil},
		pathDocsPrefix + "swagger-ui.css":           {"text/css; charset=utf-8", read("swagger-ui.css"), nil},
		pathDocsPrefix + "LICENSE":                  {text, read("LICENSE"), nil},
		pathDocsPrefix + "NOTICE":                   {text, read("NOTICE"), nil},
		pathDocsPrefix + "THIRD-PARTY-LICENSES.txt": {text, read("swagger-ui-bundle.js.LICENSE.txt"), nil},
		pathDocsPrefix + "VERSION":                  {text, read("VERSION"), nil},
	}
}

// registerDocs adds GET (and HEAD) routes for the page and its assets.
func registerDocs(app *fiber.App) {
	for path, f := range docsFiles() {
		if len(f.body) >= CompressMinBytes {
			f.encoded = map[string][]byte{}
			for _, enc := range []string{encodingZstd, encodingGzip} {
				if out := encodeBody(enc, f.body); out != nil && len(out) < len(f.body) {
					f.encoded[enc] = out
				}
			}
		}
		app.Get(path, route(path, func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, f.contentType)
			c.Set(fiber.HeaderContentSecurityPolicy, docsCSP)
			c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
			c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
			if path == pathDocs {
				c.Set(fiber.HeaderCacheControl, "no-cache")
			} else {
				c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
			}
			if f.encoded != nil {
				c.Vary(fiber.HeaderAcceptEncoding)
				enc := negotiateEncoding(c.Get(fiber.HeaderAcceptEncoding))
				if out, ok := f.encoded[enc]; ok {
					c.Set(fiber.HeaderContentEncoding, enc)
					return c.Send(out)
				}
			}
			return c.Send(f.body)
		}))
	}
}

// isDocsPath reports whether a request is for the reference page, which is
// HTML and so exempt from the JSON-only Accept check.
func isDocsPath(path string) bool {
	return path == pathDocs || strings.HasPrefix(path, pathDocsPrefix)
}

// unlessDocs runs h for every request except those of the reference page.
func unlessDocs(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if isDocsPath(c.Path()) {
			return c.Next()
		}
		return h(c)
	}
}
