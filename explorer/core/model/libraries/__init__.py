"""The model libraries a user's model module imports (timm, ultralytics, segmentation_models_pytorch, ...),
as the planner reports them when they cannot import:

    import_failure   which library in the import chain failed, its version, and why, in one sentence
"""
