"""The DUMPI (SST) reader: :mod:`.reader` (``read_dumpi``) finds the files (:mod:`.files`),
extracts each rank's calls with pydumpi in a contained child (:mod:`.raw`), resolves the
communicators across ranks (:mod:`.comms`) and lowers every rank's calls to operations
(:mod:`.lower`); :mod:`.common` holds sst-dumpi's constants.

Nothing is imported with the package: pydumpi is loaded only to read.
"""
