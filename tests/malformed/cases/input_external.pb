BXj
location
ext_ok.binp