"""What a user converts by hand where torch.utils.mkldnn.to_mkldnn cannot (explorer.core.model.modes calls it
before to_mkldnn):

    swapped_with_children   a BatchNorm2d/3d subclass with child modules (timm's BatchNormAct2d: 'drop' and
                            'act'), which to_mkldnn swaps for a ScriptModule that cannot hold its children:
                            made a plain BatchNorm followed by those children, checked against the original
"""
