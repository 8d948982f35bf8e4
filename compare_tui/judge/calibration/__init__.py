"""A judge calibrated against people's labels: sensitivity and specificity with exact
intervals (`figures`), judge-decided pass rates corrected for them (Rogan–Gladen, bounded, with
an interval carrying the run's and the calibration's uncertainty), the paired corrected
difference of two candidates (`paired`), what the store holds (`load`), the labels to ask
for next (`next_labels`) and the sentences every surface shows (`render`)."""
