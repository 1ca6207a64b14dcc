"""Static files in production: hashed names, compressed copies, and module imports rewritten.

Every file collectstatic writes gets its content's hash in its name (``table.3f1c2a9b.js``) and a
gzip (and brotli, where installed) copy beside it; WhiteNoise serves hashed names with a year's
``Cache-Control: immutable``. The JavaScript modules import each other (``import ... from
"./ui.js"``): those paths are rewritten to the hashed names too, so a page of one release only ever
loads modules of that release, and an upgrade never mixes old and new JavaScript in one tab.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
    # A module's hashed name covers the hashed names it imports, so each pass settles at least one
    # more level of imports: the passes needed grow with the longest chain of imports (table.js ->
    # socket.js -> log.js -> ... -> ui.js, about a dozen deep), past Django's default of 5. An import
    # cycle would never settle: collectstatic says so ("Max post-process passes exceeded").
    max_post_process_passes = 25
